#include "scheduler/placement_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

GpuPodRequest Pod(int32_t count, int32_t milli, int64_t cpu_milli = 4000) {
  GpuPodRequest pod;
  pod.cpu_milli = cpu_milli;
  pod.memory_mib = 1024;
  pod.gpu_count = count;
  pod.gpu_milli_each = milli;
  return pod;
}

PlacementNode Node(std::vector<int32_t> gpu_milli, int64_t cpu_milli = 64000) {
  PlacementNode node;
  node.free = GpuNodeFree{.gpu_model = "T4",
                          .cpu_milli = cpu_milli,
                          .memory_mib = 65536,
                          .gpu_milli = std::move(gpu_milli)};
  return node;
}

std::unique_ptr<PlacementPolicy> Make(std::string_view name, const WorkloadMix* mix = nullptr,
                                      PlacementRng* rng = nullptr) {
  Result<std::unique_ptr<PlacementPolicy>> policy = MakePlacementPolicy(name, mix, rng);
  EXPECT_TRUE(policy.has_value()) << policy.error().ToString();
  return std::move(*policy);
}

TEST(PlacementPolicyTest, EveryNameMakesItsPolicy) {
  const WorkloadMix mix = EstimateWorkloadMix(std::vector<GpuPodRequest>{Pod(1, 500)});
  PlacementRng rng(1);
  for (std::string_view name : PlacementPolicyNames()) {
    EXPECT_EQ(Make(name, &mix, &rng)->name(), name);
  }
  const auto unknown = MakePlacementPolicy("tetris", &mix, &rng);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_THAT(unknown.error().message(), HasSubstr("expected one of random, dotprod"));
}

TEST(PlacementPolicyTest, BaselinesPickTheTightestGpuForAFraction) {
  // GPU 1 has the least room that still fits 0.3; GPU 0 is free.
  const PlacementNode node = Node({1000, 400, 200});
  for (std::string_view name : {"dotprod", "clustering", "packing", "bestfit"}) {
    EXPECT_THAT(Make(name)->Score(node, Pod(1, 300)).gpu_indices, ElementsAre(1)) << name;
    EXPECT_THAT(Make(name)->Score(node, Pod(1, 1000)).gpu_indices, ElementsAre(0)) << name;
  }
}

TEST(PlacementPolicyTest, BestFitAndPackingPreferTheFullerNode) {
  const PlacementNode fresh = Node({1000, 1000});
  const PlacementNode used = Node({1000, 500});
  for (std::string_view name : {"bestfit", "packing"}) {
    const auto policy = Make(name);
    EXPECT_TRUE(
        policy->IsBetter(policy->Score(used, Pod(1, 400)), policy->Score(fresh, Pod(1, 400))))
        << name;
  }
  // DotProd prefers the node whose free vector points least along the request: for four whole
  // GPUs, the node with four left scores 86, the fresh one 74.
  const auto dot = Make("dotprod");
  const PlacementNode half = Node({1000, 1000, 1000, 1000, 0, 0, 0, 0});
  const PlacementNode eight = Node(std::vector<int32_t>(8, 1000));
  EXPECT_GT(dot->Score(half, Pod(4, 1000)).score, dot->Score(eight, Pod(4, 1000)).score);
}

TEST(PlacementPolicyTest, ClusteringPrefersNodesHoldingTheSameShape) {
  PlacementNode shares = Node({1000, 600});
  shares.gpu_pod_tags = {kShareTag};
  PlacementNode wholes = Node({1000, 1000});
  wholes.gpu_pod_tags = {1};
  const auto policy = Make("clustering");
  EXPECT_TRUE(
      policy->IsBetter(policy->Score(shares, Pod(1, 300)), policy->Score(wholes, Pod(1, 300))));
  EXPECT_TRUE(
      policy->IsBetter(policy->Score(wholes, Pod(1, 1000)), policy->Score(shares, Pod(1, 1000))));
  EXPECT_EQ(policy->Score(shares, Pod(0, 0)).score, 0) << "CPU-only pods score 0 everywhere";
}

TEST(PlacementPolicyTest, FragmentationPoliciesKeepWholeGpusForWholeShapes) {
  // Half the mix wants whole GPUs: a 0.5 share belongs on the half-used GPU, not a free one.
  const WorkloadMix mix =
      EstimateWorkloadMix(std::vector<GpuPodRequest>{Pod(1, 1000), Pod(1, 500)});
  const PlacementNode node = Node({1000, 500});
  for (std::string_view name : {"fgd", "strata"}) {
    EXPECT_THAT(Make(name, &mix)->Score(node, Pod(1, 500)).gpu_indices, ElementsAre(1)) << name;
  }
}

TEST(PlacementPolicyTest, StrataRanksWholeGpuAndCpuOnlyPodsAsFgdDoes) {
  // On the openb grid, the CPU-aware measure alone failed whole-GPU pods that FGD places, so
  // strata follows FGD's score for them (same GPUs, same order of nodes) where every shape of the
  // mix could run on the node.
  const WorkloadMix mix = EstimateWorkloadMix(std::vector<GpuPodRequest>{
      Pod(1, 1000, 8000), Pod(2, 1000, 16000), Pod(1, 500, 4000), Pod(0, 0, 32000)});
  const std::vector<PlacementNode> nodes = {Node({1000, 1000, 1000, 1000}, 64000),
                                            Node({1000, 1000, 500, 0}, 64000),
                                            Node({1000, 1000, 1000, 1000}, 20000)};
  auto strata = Make("strata", &mix);
  auto fgd = Make("fgd", &mix);
  for (const GpuPodRequest& pod : {Pod(1, 1000, 8000), Pod(2, 1000, 16000), Pod(0, 0, 8000)}) {
    for (const PlacementNode& node : nodes) {
      const ScoredPlacement ours = strata->Score(node, pod);
      const ScoredPlacement theirs = fgd->Score(node, pod);
      EXPECT_EQ(ours.gpu_indices, theirs.gpu_indices);
      EXPECT_EQ(ours.score, theirs.score * 1000);
    }
  }
  // A fraction is scored by strata's own rule, on strata's GPU choice: the half-used GPU.
  const ScoredPlacement share = strata->Score(nodes[1], Pod(1, 500, 4000));
  EXPECT_THAT(share.gpu_indices, ElementsAre(2));
  EXPECT_LE(share.score, 100 * 1000 + 100);
}

TEST(PlacementPolicyTest, StrataIsNotDrawnToNodesThatConstrainedShapesCannotUse) {
  // Most pods must run on V100: FGD counts a T4 node's idle GPUs as fragments to them, so a pod
  // that may run anywhere scores higher on the T4 node (any GPU taken there lowers FGD's
  // measure), and the T4 pool, the only home of the T4 pods, shrinks first. strata leaves such
  // shapes out and scores both nodes alike; the pool reserve then decides.
  GpuPodRequest v100_only = Pod(1, 1000);
  v100_only.allowed_gpu_models = {"V100M32"};
  GpuPodRequest t4_only = Pod(1, 1000);
  t4_only.allowed_gpu_models = {"T4"};
  const WorkloadMix mix = EstimateWorkloadMix(
      std::vector<GpuPodRequest>{v100_only, v100_only, v100_only, t4_only, Pod(1, 1000)});
  PlacementNode v100 = Node({1000, 1000});
  v100.free.gpu_model = "V100M32";
  const PlacementNode t4 = Node({1000, 1000});
  auto fgd = Make("fgd", &mix);
  EXPECT_GT(fgd->Score(t4, Pod(1, 1000)).score, fgd->Score(v100, Pod(1, 1000)).score);
  auto strata = Make("strata", &mix);
  EXPECT_EQ(strata->Score(t4, Pod(1, 1000)).score, strata->Score(v100, Pod(1, 1000)).score);
  EXPECT_TRUE(strata->KeepsPoolReserve());
  EXPECT_FALSE(fgd->KeepsPoolReserve());
}

TEST(PlacementPolicyTest, RandomDrawsANodeThenAGpuFromItsRng) {
  PlacementRng a(7);
  PlacementRng b(7);
  const auto first = Make("random", nullptr, &a);
  const auto second = Make("random", nullptr, &b);
  const PlacementNode node = Node({1000, 1000, 1000, 1000});
  for (int i = 0; i < 20; ++i) {
    const std::optional<size_t> drawn = first->DrawNode(5);
    ASSERT_TRUE(drawn.has_value());
    EXPECT_LT(*drawn, 5u);
    EXPECT_EQ(drawn, second->DrawNode(5));
    EXPECT_EQ(first->Score(node, Pod(1, 300)).gpu_indices,
              second->Score(node, Pod(1, 300)).gpu_indices);
  }
  EXPECT_EQ(Make("bestfit")->DrawNode(5), std::nullopt) << "scoring policies do not draw";
}

}  // namespace
}  // namespace strata::scheduler
