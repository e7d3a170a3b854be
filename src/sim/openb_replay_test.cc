#include "sim/openb_replay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace strata::sim {
namespace {

using ::testing::Optional;

OpenbNode Node(std::string name, int32_t gpus, int64_t cpu_milli = 64000) {
  return OpenbNode{.name = std::move(name),
                   .cpu_milli = cpu_milli,
                   .memory_mib = 65536,
                   .gpu_count = gpus,
                   .gpu_model = "T4"};
}

OpenbPod Pod(std::string name, int32_t gpus, int32_t milli_each, int64_t cpu_milli = 4000) {
  OpenbPod pod;
  pod.name = std::move(name);
  pod.cpu_milli = cpu_milli;
  pod.memory_mib = 1024;
  pod.gpu_count = gpus;
  pod.gpu_milli_each = milli_each;
  return pod;
}

TEST(OpenbReplayTest, TinyClusterAllocationIsExactForEveryPolicy) {
  // Two one-GPU nodes (capacity 2000 milli, 20 milli per %) and three 0.6-GPU pods: 1800 arrive
  // (90 %), and sampling adds one copy (2400, 120 %) before the next would pass 130 % (2600).
  // Only one 0.6 fits on a GPU, so two pods land whatever the order or the policy:
  // arrived 30/60/90/120 %, allocated 30/60/60/60 %.
  const std::vector<OpenbNode> nodes = {Node("n0", 1), Node("n1", 1)};
  const std::vector<OpenbPod> pods = {Pod("a", 1, 600), Pod("b", 1, 600), Pod("c", 1, 600)};
  for (std::string_view policy : scheduler::PlacementPolicyNames()) {
    SCOPED_TRACE(policy);
    const auto run = ReplayOpenbSeed(nodes, pods, policy, 42);
    ASSERT_TRUE(run.has_value()) << run.error().ToString();
    EXPECT_EQ(run->pods_arrived, 4);
    EXPECT_EQ(run->pods_placed, 2);
    EXPECT_THAT(run->curve.AllocPctAt(30), Optional(30.0));
    EXPECT_THAT(run->curve.AllocPctAt(60), Optional(60.0));
    EXPECT_THAT(run->curve.AllocPctAt(90), Optional(60.0));
    EXPECT_THAT(run->curve.AllocPctAt(120), Optional(60.0));
    EXPECT_THAT(run->curve.AllocPctAt(91), Optional(60.0)) << "falls back to columns 90..92";
    EXPECT_EQ(run->curve.AllocPctAt(100), std::nullopt);
  }
}

TEST(OpenbReplayTest, ListsThePodsFailedBelowNinetyPercentLoad) {
  // Two one-GPU nodes (2000 milli) and pods of 0.6, 0.6 and 0.5 GPU: whatever the order, the
  // first two take one GPU each and the third (arrived 1700 = 85 %) fits on neither. The copies
  // sampled after it arrive above 90 % and are not listed even when they fail.
  const std::vector<OpenbNode> nodes = {Node("n0", 1), Node("n1", 1)};
  const std::vector<OpenbPod> pods = {Pod("a", 1, 600), Pod("b", 1, 600), Pod("c", 1, 500)};
  for (std::string_view policy : scheduler::PlacementPolicyNames()) {
    SCOPED_TRACE(policy);
    const auto run = ReplayOpenbSeed(nodes, pods, policy, 7);
    ASSERT_TRUE(run.has_value()) << run.error().ToString();
    EXPECT_EQ(run->failed_early, (std::vector<int64_t>{2}));
    EXPECT_GT(run->pods_arrived - run->pods_placed, 1);
  }
  const auto summary = ReplayOpenb(nodes, pods, "fgd", {1, 2}, {100});
  ASSERT_TRUE(summary.has_value()) << summary.error().ToString();
  EXPECT_EQ(summary->failed_early,
            (std::vector<std::vector<int64_t>>{std::vector<int64_t>{2}, std::vector<int64_t>{2}}));
}

TEST(OpenbReplayTest, SummaryAveragesSeedsAtRequestedLoads) {
  const std::vector<OpenbNode> nodes = {Node("n0", 1), Node("n1", 1)};
  const std::vector<OpenbPod> pods = {Pod("a", 1, 600), Pod("b", 1, 600), Pod("c", 1, 600)};
  const auto summary = ReplayOpenb(nodes, pods, "bestfit", {1, 2, 3}, {90, 100});
  ASSERT_TRUE(summary.has_value()) << summary.error().ToString();
  EXPECT_EQ(summary->seeds, (std::vector<uint64_t>{1, 2, 3}));
  ASSERT_EQ(summary->alloc_pct.size(), 2u);
  EXPECT_EQ(summary->alloc_pct[0].first, 90);
  EXPECT_THAT(summary->alloc_pct[0].second, Optional(60.0));
  EXPECT_EQ(summary->alloc_pct[1].second, std::nullopt);
  EXPECT_FALSE(ReplayOpenb(nodes, pods, "bestfit", {}, {90}).has_value());
}

TEST(OpenbReplayTest, PackingPoliciesKeepAWholeGpuFreeWhereRandomMayNot) {
  // One two-GPU node; two 0.5-GPU pods and one whole-GPU pod arrive in a seed-dependent order
  // (2000 milli: column 100; a sampled copy can only come after them). Best fit and the
  // fragmentation scorers put both halves on one GPU, so in every order all three fit.
  const std::vector<OpenbNode> nodes = {Node("n0", 2)};
  const std::vector<OpenbPod> pods = {Pod("a", 1, 500), Pod("b", 1, 500), Pod("c", 1, 1000)};
  for (std::string_view policy : {"bestfit", "packing", "fgd", "strata"}) {
    SCOPED_TRACE(policy);
    for (uint64_t seed = 0; seed < 8; ++seed) {
      const auto run = ReplayOpenbSeed(nodes, pods, policy, seed);
      ASSERT_TRUE(run.has_value());
      EXPECT_THAT(run->curve.AllocPctAt(100), Optional(100.0)) << "seed " << seed;
    }
  }
}

TEST(OpenbReplayTest, SameSeedSameRun) {
  std::vector<OpenbNode> nodes;
  for (int i = 0; i < 6; ++i) nodes.push_back(Node("n" + std::to_string(i), 1 + i % 4));
  std::vector<OpenbPod> pods;
  for (int i = 0; i < 20; ++i) pods.push_back(Pod("p" + std::to_string(i), 1, 100 + 97 * i % 900));
  pods.push_back(Pod("cpu", 0, 0, 30000));
  pods.push_back(Pod("two", 2, 1000));
  for (std::string_view policy : scheduler::PlacementPolicyNames()) {
    const auto first = ReplayOpenbSeed(nodes, pods, policy, 7);
    const auto second = ReplayOpenbSeed(nodes, pods, policy, 7);
    ASSERT_TRUE(first.has_value() && second.has_value());
    EXPECT_EQ(first->pods_placed, second->pods_placed) << policy;
    for (int load = 0; load <= 130; ++load) {
      EXPECT_EQ(first->curve.AllocPctAt(load), second->curve.AllocPctAt(load));
    }
  }
}

TEST(OpenbReplayTest, ArrivalsAreEveryPodOnceThenCopiesUpToTheTarget) {
  const std::vector<OpenbPod> pods = {Pod("gpu", 1, 1000), Pod("cpu", 0, 0), Pod("half", 1, 500)};
  OpenbRng rng(3);
  const std::vector<size_t> arrivals = OpenbArrivals(pods, 4000, rng);
  ASSERT_GE(arrivals.size(), 3u);
  std::vector<size_t> originals(arrivals.begin(), arrivals.begin() + 3);
  std::sort(originals.begin(), originals.end());
  EXPECT_EQ(originals, (std::vector<size_t>{0, 1, 2}));
  int64_t arrived = 0;
  for (size_t index : arrivals)
    arrived += int64_t{pods[index].gpu_count} * pods[index].gpu_milli_each;
  EXPECT_LE(arrived, 4000);
  EXPECT_GE(arrived, 3000) << "sampling stops only when a draw would pass the target";
}

TEST(OpenbReplayTest, LoadColumnsRoundHalfToEven) {
  OpenbAllocationCurve curve(1000);  // 10 milli per %
  curve.Record(25, 10);              // 2.5 % arrived -> column 2
  curve.Record(35, 20);              // 3.5 % arrived -> column 4
  curve.Record(44, 30);              // 4.4 % -> column 4
  EXPECT_THAT(curve.AllocPctAt(2), Optional(1.0));
  EXPECT_THAT(curve.AllocPctAt(4), Optional(2.5));
  EXPECT_THAT(curve.AllocPctAt(3), Optional((1.0 + 2.0 + 3.0) / 3)) << "neighbours 2..4";
  EXPECT_EQ(curve.AllocPctAt(7), std::nullopt);
}

TEST(OpenbReplayTest, ClusterWithoutGpusOrPodsIsAnError) {
  const auto no_gpu = ReplayOpenbSeed({Node("n0", 0)}, {Pod("a", 1, 100)}, "fgd", 1);
  ASSERT_FALSE(no_gpu.has_value());
  EXPECT_EQ(no_gpu.error().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ReplayOpenbSeed({Node("n0", 1)}, {}, "fgd", 1).has_value());
}

TEST(OpenbReplayTest, UnknownPolicyIsAnError) {
  for (std::string_view policy : scheduler::PlacementPolicyNames()) {
    EXPECT_TRUE(ReplayOpenbSeed({Node("n0", 1)}, {Pod("a", 1, 100)}, policy, 1).has_value());
  }
  const auto unknown = ReplayOpenbSeed({Node("n0", 1)}, {Pod("a", 1, 100)}, "tetris", 1);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_THAT(unknown.error().message(), ::testing::HasSubstr("expected one of random, dotprod"));
}

}  // namespace
}  // namespace strata::sim
