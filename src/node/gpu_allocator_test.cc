// The virtual kubelet's allocation of whole GPUs to foreign pods: the free set, NVLink islands,
// health, the kubelet's words when GPUs run out, and what a restarted agent restores.
#include "node/gpu_allocator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/annotations.h"

namespace strata::node {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A node with `islands[i]` as the NVLink island of GPU i, UUIDs "GPU-<i>".
api::Node NodeWith(const std::vector<int64_t>& islands) {
  api::Node node;
  node.metadata.name = "node-a";
  for (size_t i = 0; i < islands.size(); ++i) {
    api::NodeGpu gpu;
    gpu.index = static_cast<int64_t>(i);
    gpu.uuid = "GPU-" + std::to_string(i);
    gpu.nvlink_island = islands[i];
    node.status.gpus.push_back(gpu);
  }
  return node;
}

TEST(GpuAllocatorTest, PicksTheLowestFreeGpusWhenTheNodeHasOneIsland) {
  const api::Node node = NodeWith({0, 0, 0, 0});
  Result<std::vector<int64_t>> picked = PickGpus(node, {0, 2}, 2);
  ASSERT_TRUE(picked.has_value()) << picked.error().ToString();
  EXPECT_THAT(*picked, ElementsAre(1, 3)) << "never one a pod holds";
}

TEST(GpuAllocatorTest, KeepsAPodInOneNvlinkIslandAndTheRoomiestIslandsWhole) {
  // Islands: {0,1,2,3} and {4,5,6,7}; GPU 0 held, so island 0 has 3 free, island 1 has 4.
  const api::Node node = NodeWith({0, 0, 0, 0, 1, 1, 1, 1});
  Result<std::vector<int64_t>> two = PickGpus(node, {0}, 2);
  ASSERT_TRUE(two.has_value());
  EXPECT_THAT(*two, ElementsAre(1, 2)) << "the tightest island that fits, not the whole one";
  Result<std::vector<int64_t>> four = PickGpus(node, {0}, 4);
  ASSERT_TRUE(four.has_value());
  EXPECT_THAT(*four, ElementsAre(4, 5, 6, 7)) << "one island, although lower indices are free";
}

TEST(GpuAllocatorTest, SpansTheFewestIslandsWhenNoneHasRoom) {
  // Islands {0,1} {2,3,4} {5}: 4 GPUs need two islands, the roomiest first.
  const api::Node node = NodeWith({0, 0, 1, 1, 1, 2});
  Result<std::vector<int64_t>> picked = PickGpus(node, {}, 4);
  ASSERT_TRUE(picked.has_value());
  EXPECT_THAT(*picked, ElementsAre(0, 2, 3, 4));
}

TEST(GpuAllocatorTest, NeverGivesAnUnhealthyOrMigGpu) {
  api::Node node = NodeWith({0, 0, 0, 0});
  node.metadata.annotations[api::kGpuHealthAnnotation] =
      R"([{"uuid":"GPU-0","healthy":false,"reason":"Xid 79"},{"uuid":"GPU-1","healthy":true}])";
  node.status.gpus[2].mig_enabled = true;
  EXPECT_EQ(UnhealthyGpuUuids(node), std::set<std::string>{"GPU-0"});
  Result<std::vector<int64_t>> picked = PickGpus(node, {3}, 2);
  ASSERT_FALSE(picked.has_value());
  EXPECT_EQ(picked.error().message(),
            "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. "
            "Requested: 2, Available: 1, which is unexpected");
  EXPECT_THAT(*PickGpus(node, {}, 2), ElementsAre(1, 3));
}

TEST(GpuAllocatorTest, SaysWhatTheKubeletSaysWhenThereIsNothingToGive) {
  const api::Node none = NodeWith({});
  EXPECT_THAT(PickGpus(none, {}, 1).error().message(),
              HasSubstr("cannot allocate unregistered device nvidia.com/gpu"));
  api::Node sick = NodeWith({0});
  sick.metadata.annotations[api::kGpuHealthAnnotation] = R"([{"uuid":"GPU-0","healthy":false}])";
  EXPECT_EQ(PickGpus(sick, {}, 1).error().message(),
            "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices "
            "nvidia.com/gpu, which is unexpected");
}

TEST(GpuAllocatorTest, GivesEachGpuOnceAndKeepsAPodsGpusUntilReleased) {
  const api::Node node = NodeWith({0, 0, 0, 0});
  GpuAllocator allocator;
  // GPU 0 is a strata pod's (assigned by the control plane).
  Result<std::vector<int64_t>> first = allocator.Allocate("a", node, 2, {0});
  ASSERT_TRUE(first.has_value());
  EXPECT_THAT(*first, ElementsAre(1, 2));
  Result<std::vector<int64_t>> second = allocator.Allocate("b", node, 2, {0});
  ASSERT_FALSE(second.has_value());
  EXPECT_THAT(second.error().message(), HasSubstr("Requested: 2, Available: 1"));
  // A container restarting in place keeps its GPUs, whatever it would be given now.
  EXPECT_THAT(*allocator.Allocate("a", node, 2, {1, 2, 3}), ElementsAre(1, 2));
  allocator.Release("a");
  EXPECT_EQ(allocator.HeldBy("a"), nullptr);
  EXPECT_THAT(*allocator.Allocate("b", node, 2, {0}), ElementsAre(1, 2));
  allocator.Retain({"c"});
  EXPECT_EQ(allocator.HeldBy("b"), nullptr) << "a pod gone from the store holds nothing";
  EXPECT_TRUE(allocator.Allocate("c", node, 0, {}).has_value());
  EXPECT_EQ(allocator.HeldBy("c"), nullptr) << "a pod asking none holds none";
}

TEST(GpuAllocatorTest, ARestartedAgentGivesNoOtherPodTheGpusItRestores) {
  const api::Node node = NodeWith({0, 0, 0, 0});
  GpuAllocator before;
  Result<std::vector<int64_t>> held = before.Allocate("a", node, 2, {});
  ASSERT_TRUE(held.has_value());
  // What the agent reported on the pod, read back by the next agent.
  const std::string reported = AllocatedGpusAnnotation(node, *held);
  EXPECT_EQ(
      reported,
      R"([{"health":"Healthy","resourceID":"GPU-0"},{"health":"Healthy","resourceID":"GPU-1"}])");
  Result<std::vector<int64_t>> read = ParseAllocatedGpus(node, reported);
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  GpuAllocator after;
  after.Restore("a", "node-a", *read);
  EXPECT_THAT(*after.Allocate("b", node, 2, {}), ElementsAre(2, 3));
  EXPECT_FALSE(after.Allocate("c", node, 1, {}).has_value());
  // Held GPUs of another node take nothing here.
  GpuAllocator elsewhere;
  elsewhere.Restore("x", "node-b", {0, 1, 2, 3});
  EXPECT_TRUE(elsewhere.Allocate("y", node, 4, {}).has_value());
  EXPECT_FALSE(ParseAllocatedGpus(node, R"([{"resourceID":"GPU-9"}])").has_value());
  EXPECT_FALSE(ParseAllocatedGpus(node, "not json").has_value());
}

TEST(GpuAllocatorTest, ReportsEachGpusHealthAndTheDevicePluginsVariables) {
  api::Node node = NodeWith({0, 0});
  node.metadata.annotations[api::kGpuHealthAnnotation] = R"([{"uuid":"GPU-1","healthy":false}])";
  EXPECT_EQ(
      AllocatedGpusAnnotation(node, {1, 7}),
      R"([{"health":"Unhealthy","resourceID":"GPU-1"},{"health":"Unknown","resourceID":"7"}])");
  api::Environment env = GpuVisibilityEnv(&node, {0, 1});
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,1");
  EXPECT_EQ(env["NVIDIA_VISIBLE_DEVICES"], "GPU-0,GPU-1");
  api::Environment none = GpuVisibilityEnv(&node, {});
  EXPECT_EQ(none["CUDA_VISIBLE_DEVICES"], "");
  EXPECT_EQ(none["NVIDIA_VISIBLE_DEVICES"], "void");
  // Without UUIDs (GPUs counted from the node's allocatable), the index is the device's ID.
  node.status.gpus[0].uuid.clear();
  EXPECT_EQ(GpuVisibilityEnv(&node, {0})["NVIDIA_VISIBLE_DEVICES"], "0");
}

TEST(GpuAllocatorTest, AShareOfAGpuIsRefusedByName) {
  api::Pod pod;
  pod.spec.resources.gpu = Quantity::FromUnits(2);
  EXPECT_EQ(*RequestedGpus(pod), 2);
  pod.metadata.annotations[api::kGpuShareRequestAnnotation] = "nvidia.com/gpumem=4000";
  Result<int64_t> share = RequestedGpus(pod);
  ASSERT_FALSE(share.has_value());
  EXPECT_EQ(share.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(share.error().message(), HasSubstr("nvidia.com/gpumem=4000"));
  pod.metadata.annotations.clear();
  Result<Quantity> half = Quantity::Parse("500m");
  ASSERT_TRUE(half.has_value());
  pod.spec.resources.gpu = *half;
  EXPECT_FALSE(RequestedGpus(pod).has_value());
}

}  // namespace
}  // namespace strata::node
