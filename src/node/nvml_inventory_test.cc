#include "node/nvml_inventory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "node/simulated_inventory.h"

namespace strata::node {
namespace {

using ::testing::HasSubstr;

TEST(NvmlInventoryTest, ReadsTheFakeLibrary) {
  NvmlInventory inventory(STRATA_FAKE_NVML_PATH, "host-a");
  Result<std::vector<NodeGpus>> nodes = inventory.Discover();
  ASSERT_TRUE(nodes) << nodes.error().ToString();
  ASSERT_EQ(nodes->size(), 1u);
  const NodeGpus& node = nodes->front();
  EXPECT_EQ(node.node_name, "host-a");
  EXPECT_EQ(node.rack, "");
  ASSERT_EQ(node.gpus.size(), 8u);
  for (const GpuDevice& gpu : node.gpus) {
    EXPECT_EQ(gpu.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpu.uuid, "GPU-fake-" + std::to_string(gpu.index));
    EXPECT_EQ(gpu.memory_bytes, int64_t{81559} << 20);
    EXPECT_EQ(gpu.nvlink_island, gpu.index < 4 ? 0 : 1) << gpu.index;
    EXPECT_EQ(gpu.mig_enabled, gpu.index == 5) << gpu.index;
  }
  const GpuDevice& mig_gpu = node.gpus[5];
  ASSERT_EQ(mig_gpu.mig_instances.size(), 2u);
  EXPECT_EQ(mig_gpu.mig_instances[0].uuid, "MIG-fake-5-0");
  EXPECT_EQ(mig_gpu.mig_instances[1].uuid, "MIG-fake-5-1");
  EXPECT_EQ(mig_gpu.mig_instances[1].name, "NVIDIA H100 80GB HBM3 MIG 1g.10gb");
  EXPECT_EQ(mig_gpu.mig_instances[1].memory_bytes, int64_t{9856} << 20);
  EXPECT_TRUE(node.gpus[4].mig_instances.empty());
}

TEST(NvmlInventoryTest, MissingLibraryIsUnavailableWithTheLoadersWords) {
  NvmlInventory inventory("/nonexistent/libnvidia-ml.so.1", "host-a");
  Result<std::vector<NodeGpus>> nodes = inventory.Discover();
  ASSERT_FALSE(nodes);
  EXPECT_EQ(nodes.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(nodes.error().message(), HasSubstr("/nonexistent/libnvidia-ml.so.1"));
}

TEST(NvmlInventoryTest, LibraryWithoutNvmlSymbolsIsUnavailable) {
  NvmlInventory inventory("libm.so.6", "host-a");
  Result<std::vector<NodeGpus>> nodes = inventory.Discover();
  ASSERT_FALSE(nodes);
  EXPECT_EQ(nodes.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(nodes.error().message(), HasSubstr("lacks the symbol nvmlInit_v2"));
}

TEST(OpenLocalInventoryTest, UsesNvmlWhenItFindsGpus) {
  Result<LocalInventory> local =
      OpenLocalInventory(STRATA_FAKE_NVML_PATH, "host-a", kDefaultSimulateSpec);
  ASSERT_TRUE(local) << local.error().ToString();
  EXPECT_EQ(local->notice, "found 8 GPU(s) through NVML");
  ASSERT_EQ(local->nodes.size(), 1u);
  EXPECT_THAT(local->inventory->Describe(), HasSubstr("nvml ("));
}

TEST(OpenLocalInventoryTest, FallsBackToTheSimulationAndSaysWhy) {
  Result<LocalInventory> local =
      OpenLocalInventory("/nonexistent/libnvidia-ml.so.1", "host-a", kDefaultSimulateSpec);
  ASSERT_TRUE(local) << local.error().ToString();
  EXPECT_THAT(local->notice, HasSubstr("no NVIDIA GPU found (NVML not loaded: "));
  EXPECT_THAT(local->notice, HasSubstr("using the simulated 4x8:H100-80GB,racks=2 inventory"));
  EXPECT_EQ(local->nodes.size(), 4u);
}

TEST(OpenLocalInventoryTest, RejectsABadSimulateSpecEvenWhenNvmlWorks) {
  Result<LocalInventory> local = OpenLocalInventory(STRATA_FAKE_NVML_PATH, "host-a", "4x8:X");
  ASSERT_FALSE(local);
  EXPECT_EQ(local.error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::node
