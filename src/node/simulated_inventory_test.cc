#include "node/simulated_inventory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::node {
namespace {

using ::testing::HasSubstr;

TEST(ParseSimulateSpecTest, ParsesTheDefaultSeedShape) {
  Result<SimulateSpec> spec = ParseSimulateSpec(kDefaultSimulateSpec);
  ASSERT_TRUE(spec) << spec.error().ToString();
  EXPECT_EQ(spec->nodes, 4);
  EXPECT_EQ(spec->gpus_per_node, 8);
  EXPECT_EQ(spec->model->name, "H100-80GB");
  EXPECT_EQ(spec->racks, 2);
  EXPECT_EQ(FormatSimulateSpec(*spec), kDefaultSimulateSpec);
}

TEST(ParseSimulateSpecTest, RacksDefaultToOne) {
  Result<SimulateSpec> spec = ParseSimulateSpec("2x4:L40S");
  ASSERT_TRUE(spec) << spec.error().ToString();
  EXPECT_EQ(spec->racks, 1);
  EXPECT_EQ(spec->model->memory_bytes, int64_t{48} << 30);
}

TEST(ParseSimulateSpecTest, UnknownModelIsNamedWithTheKnownOnes) {
  Result<SimulateSpec> spec = ParseSimulateSpec("4x8:H100-80GBX");
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.error().message(),
              HasSubstr("\"4x8:H100-80GBX\": unknown GPU model \"H100-80GBX\" (known: "));
  EXPECT_THAT(spec.error().message(), HasSubstr("H200-141GB"));
}

struct BadSpec {
  const char* text;
  const char* message;
};

class BadSimulateSpecTest : public ::testing::TestWithParam<BadSpec> {};

TEST_P(BadSimulateSpecTest, IsRejectedWithAClearMessage) {
  Result<SimulateSpec> spec = ParseSimulateSpec(GetParam().text);
  ASSERT_FALSE(spec) << GetParam().text;
  EXPECT_EQ(spec.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.error().message(), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, BadSimulateSpecTest,
    ::testing::Values(BadSpec{"4x8", "missing ':'"}, BadSpec{"", "missing ':'"},
                      BadSpec{"48:H100-80GB", "shape \"48\" has no 'x'"},
                      BadSpec{"ax8:H100-80GB", "node count \"a\" is not a whole number"},
                      BadSpec{"4x:H100-80GB", "GPUs per node \"\" is not a whole number"},
                      BadSpec{"0x8:H100-80GB", "node count must be between 1 and"},
                      BadSpec{"4x65:H100-80GB", "GPUs per node must be between 1 and 64, got 65"},
                      BadSpec{"4x8:H100-80GB,racks=5", "racks (5) exceeds the node count (4)"},
                      BadSpec{"4x8:H100-80GB,racks=", "racks \"\" is not a whole number"},
                      BadSpec{"4x8:H100-80GB,zones=2", "unknown option \"zones=2\""},
                      BadSpec{"4x8:H100-80GB,racks", "unknown option \"racks\""},
                      BadSpec{"4x8:H100-80GB,prefix=Plane_B", "prefix \"Plane_B\" is not"},
                      BadSpec{"4x8:H100-80GB,prefix=", "prefix \"\" is not"},
                      BadSpec{"4x8:H100-80GB,prefix=b-", "prefix \"b-\" is not"},
                      BadSpec{"4x8:", "unknown GPU model \"\""}));

TEST(SimulatedInventoryTest, SpreadsNodesOverRacksAndGroupsNvlinkIslands) {
  SimulatedInventory inventory(*ParseSimulateSpec("4x8:H100-80GB,racks=2"));
  Result<std::vector<NodeGpus>> nodes = inventory.Discover();
  ASSERT_TRUE(nodes);
  ASSERT_EQ(nodes->size(), 4u);
  EXPECT_EQ((*nodes)[0].node_name, "sim-node-0");
  EXPECT_EQ((*nodes)[0].rack, "rack-0");
  EXPECT_EQ((*nodes)[1].rack, "rack-0");
  EXPECT_EQ((*nodes)[2].rack, "rack-1");
  EXPECT_EQ((*nodes)[3].rack, "rack-1");
  const NodeGpus& last = (*nodes)[3];
  ASSERT_EQ(last.gpus.size(), 8u);
  EXPECT_EQ(last.gpus[7].index, 7);
  EXPECT_EQ(last.gpus[7].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(last.gpus[7].memory_bytes, int64_t{80} << 30);
  EXPECT_EQ(last.gpus[7].uuid, "GPU-sim-0003-07");
  for (const GpuDevice& gpu : last.gpus) EXPECT_EQ(gpu.nvlink_island, 0);
  EXPECT_EQ(inventory.Describe(), "simulated 4x8:H100-80GB,racks=2");
}

TEST(SimulatedInventoryTest, APrefixNamesTheNodesAndTheirGpus) {
  Result<SimulateSpec> spec = ParseSimulateSpec("2x4:H100-80GB,prefix=plane-b");
  ASSERT_TRUE(spec) << spec.error().ToString();
  SimulatedInventory inventory(*spec);
  Result<std::vector<NodeGpus>> nodes = inventory.Discover();
  ASSERT_TRUE(nodes);
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[1].node_name, "plane-b-1");
  EXPECT_EQ((*nodes)[1].gpus[3].uuid, "GPU-plane-b-1-03");
  EXPECT_EQ(inventory.Describe(), "simulated 2x4:H100-80GB,racks=1,prefix=plane-b");
  EXPECT_EQ(ParseSimulateSpec(FormatSimulateSpec(*spec))->node_prefix, "plane-b");
}

TEST(SimulatedInventoryTest, PcieCardsAreEachTheirOwnIsland) {
  SimulatedInventory inventory(*ParseSimulateSpec("1x4:L40S"));
  Result<std::vector<NodeGpus>> nodes = inventory.Discover();
  ASSERT_TRUE(nodes);
  for (const GpuDevice& gpu : (*nodes)[0].gpus) EXPECT_EQ(gpu.nvlink_island, gpu.index);
}

TEST(GpuModelsTest, TableIsSortedAndFindable) {
  std::span<const GpuModel> models = KnownGpuModels();
  for (size_t i = 1; i < models.size(); ++i) EXPECT_LT(models[i - 1].name, models[i].name);
  for (const GpuModel& model : models) {
    EXPECT_EQ(FindGpuModel(model.name), &model);
    EXPECT_GT(model.memory_bytes, 0);
    EXPECT_GE(model.nvlink_domain_size, 1);
  }
  EXPECT_EQ(FindGpuModel("h100-80gb"), nullptr);
}

}  // namespace
}  // namespace strata::node
