#include "server/inventory_metadata.h"

#include <gtest/gtest.h>

#include "api/annotations.h"

namespace strata::server {
namespace {

using json = nlohmann::json;

api::Node FourGpus() {
  api::Node node;
  node.metadata.name = "gpu-1";
  node.metadata.labels[api::kGpuProductLabel] = "NVIDIA-H100-80GB-HBM3";
  node.metadata.labels[api::kGpuModelLabel] = "H100-80GB";
  for (int64_t i = 0; i < 4; ++i) {
    api::NodeGpu gpu;
    gpu.index = i;
    gpu.uuid = "GPU-" + std::to_string(i);
    gpu.model = "H100-80GB";
    gpu.memory = Quantity::FromUnits(int64_t{81559} << 20, Quantity::Format::kBinarySI);
    gpu.nvlink_island = i / 2;
    gpu.mig_enabled = i == 3;
    node.status.gpus.push_back(gpu);
  }
  return node;
}

TEST(InventoryMetadataTest, GpuFeatureDiscoverysLabelsIslandsMigAndHealth) {
  observe::GpuReadingsByUuid readings;
  readings["GPU-1"].last_xid = 79;
  readings["GPU-2"].ecc_dbe_volatile = 2;
  readings["GPU-0"].last_xid = 13;  // an application's error: the GPU stays in service
  json metadata = InventoryMetadata(FourGpus(), readings);
  const json& labels = metadata["labels"];
  EXPECT_EQ(labels[api::kGpuProductLabel], "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(labels[api::kGpuMemoryLabel], "81559");
  EXPECT_EQ(labels[api::kGpuCountLabel], "4");
  EXPECT_EQ(labels[api::kGpuPresentLabel], "true");
  EXPECT_EQ(labels[api::kNvlinkIslandsLabel], "2");
  EXPECT_EQ(labels[api::kMigEnabledLabel], "true");
  EXPECT_EQ(labels[api::kUnhealthyGpusLabel], "2");
  json health = json::parse(metadata["annotations"][api::kGpuHealthAnnotation].get<std::string>());
  ASSERT_EQ(health.size(), 4u);
  EXPECT_EQ(health[0], json({{"uuid", "GPU-0"}, {"healthy", true}}));
  EXPECT_EQ(health[1], json({{"uuid", "GPU-1"}, {"healthy", false}, {"reason", "Xid 79"}}));
  EXPECT_EQ(health[2]["reason"], "2 uncorrected ECC errors");
  json gpus = json::parse(metadata["annotations"][api::kNodeGpusAnnotation].get<std::string>());
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(gpus[3]["nvlinkIsland"], 1);
  EXPECT_EQ(gpus[3]["uuid"], "GPU-3");
  EXPECT_EQ(metadata.size(), 2u);  // labels and annotations: nothing of the kubelet's
}

TEST(InventoryMetadataTest, ANodeWithoutGpusSaysSo) {
  api::Node node;
  node.metadata.name = "cpu-1";
  json labels = InventoryMetadata(node, {})["labels"];
  EXPECT_EQ(labels[api::kGpuPresentLabel], "false");
  EXPECT_EQ(labels[api::kGpuCountLabel], "0");
  EXPECT_FALSE(labels.contains(api::kGpuMemoryLabel));
}

TEST(InventoryMetadataTest, UnreadFiguresCountAsHealthy) {
  EXPECT_TRUE(JudgeGpuHealth(observe::GpuReading{}).healthy);
  observe::GpuReading one;
  one.ecc_dbe_volatile = 1;
  EXPECT_EQ(JudgeGpuHealth(one).reason, "1 uncorrected ECC error");
}

}  // namespace
}  // namespace strata::server
