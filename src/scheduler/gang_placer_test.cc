// The gang placer's pool reserve, through the scheduler's cycle (where the reserve is built from
// what waits and runs) and on a capacity index directly (the pool sums).
#include "scheduler/gang_placer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/capacity_index.h"
#include "scheduler/scheduler.h"

namespace strata::scheduler {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

Node MakeNode(std::string name, std::string model, int gpus, int64_t cpu_milli) {
  Node node;
  node.name = std::move(name);
  node.cpu_milli = cpu_milli;
  node.memory_bytes = 512 * kGi;
  for (int i = 0; i < gpus; ++i) node.gpus.push_back(Gpu{model, 81920, 0, false});
  return node;
}

PodSet Gpus(int count, int64_t cpu_milli = 1000, std::vector<std::string> models = {}) {
  PodSet ps;
  ps.cpu_milli = cpu_milli;
  ps.memory_bytes = kGi;
  ps.gpu.count = count;
  ps.gpu.models = std::move(models);
  return ps;
}

PodSet Share(int64_t milli, std::vector<std::string> models = {}) {
  PodSet ps = Gpus(0, 1000, std::move(models));
  ps.gpu.milli = milli;
  return ps;
}

Workload MakeWorkload(std::string name, int submitted_s, std::vector<PodSet> pod_sets) {
  Workload w;
  w.name = std::move(name);
  w.submitted = TimePoint(std::chrono::seconds(submitted_s));
  w.pod_sets = std::move(pod_sets);
  return w;
}

// Node name of each pod of each bound workload, by workload.
std::map<std::string, std::vector<std::string>> Placements(const Cluster& cluster,
                                                           const Decisions& decisions) {
  std::map<std::string, std::vector<std::string>> out;
  for (const Binding& b : decisions.bindings) {
    for (const PodPlacement& p : b.pods) out[b.workload].push_back(cluster.nodes[p.node].name);
  }
  return out;
}

Decisions RunCycle(std::shared_ptr<const Cluster> cluster, const std::vector<Workload>& pending,
                   std::string share_placement, std::vector<RunningWorkload> running = {}) {
  SchedulerOptions options;
  options.share_placement = std::move(share_placement);
  const Scheduler scheduler(options);
  return scheduler.Cycle(Snapshot{cluster, std::move(running), TimePoint(), nullptr}, pending);
}

// Two 8-GPU A100 nodes and one 4-GPU T4 node: 20 GPUs.
std::shared_ptr<const Cluster> SmallPoolCluster() {
  auto cluster = std::make_shared<Cluster>();
  cluster->nodes = {MakeNode("a100-0", "A100-80GB", 8, 64000),
                    MakeNode("a100-1", "A100-80GB", 8, 64000), MakeNode("t4-0", "T4", 4, 32000)};
  return cluster;
}

// 8 pods of `any` that may run anywhere arrive first, then 4 one-GPU pods that need a T4. The
// reserve keeps the T4 pool its share of the free GPUs (a third of the GPU demand needs T4, or
// half when `any` asks for half a GPU), so it holds the 4 T4 GPUs while the cluster stays at
// most about half full, as here.
std::vector<Workload> AnyThenT4(PodSet any) {
  std::vector<Workload> pending;
  for (int i = 0; i < 8; ++i) pending.push_back(MakeWorkload("any-" + std::to_string(i), i, {any}));
  for (int i = 0; i < 4; ++i) {
    pending.push_back(MakeWorkload("t4-" + std::to_string(i), 8 + i, {Gpus(1, 1000, {"T4"})}));
  }
  return pending;
}

TEST(GangPlacerReserveTest, KeepsTheSmallPoolForThePodsThatNeedIt) {
  const auto cluster = SmallPoolCluster();
  const std::vector<Workload> pending = AnyThenT4(Gpus(1));

  // Without the reserve (bestfit keeps none) the unconstrained pods take the T4 node first (4
  // free GPUs fit tighter than 8) and the T4 pods fail with 12 A100 GPUs free.
  const Decisions plain = RunCycle(cluster, pending, "bestfit");
  EXPECT_EQ(Placements(*cluster, plain).at("any-0"), std::vector<std::string>{"t4-0"});
  EXPECT_EQ(plain.bindings.size(), 8u);
  EXPECT_EQ(plain.pending.size(), 4u);
  for (const Pending& p : plain.pending) EXPECT_EQ(p.workload.substr(0, 3), "t4-") << p.workload;

  // With it (strata's policy), they leave the T4 pool its share and every pod places.
  const Decisions kept = RunCycle(cluster, pending, "strata");
  EXPECT_EQ(kept.bindings.size(), 12u);
  EXPECT_TRUE(kept.pending.empty());
  EXPECT_TRUE(kept.preemptions.empty());
  for (const auto& [name, nodes] : Placements(*cluster, kept)) {
    const bool on_t4 = nodes[0] == "t4-0";
    EXPECT_EQ(on_t4, name.starts_with("t4-")) << name << " on " << nodes[0];
  }
}

TEST(GangPlacerReserveTest, RestrictsTheSharePolicyToPoolsThatKeepTheirReserve) {
  // Half of the T4 node's first GPU is taken by a share: the share policy would fill it with the
  // next half GPU (no fragment left). Three quarters of the demand needs T4, so the T4 pool is
  // short and the share goes to an A100 node instead.
  const auto cluster = SmallPoolCluster();
  PodSet half = Share(500);
  RunningWorkload running{MakeWorkload("held-share", 0, {half}), -1, {{0, 0, 2, {0}}}, {}, {}, 0};
  std::vector<Workload> pending = {MakeWorkload("any-share", 1, {half})};
  for (int i = 0; i < 3; ++i) {
    pending.push_back(MakeWorkload("t4-" + std::to_string(i), 2 + i, {Gpus(1, 1000, {"T4"})}));
  }
  const Decisions kept = RunCycle(cluster, pending, "strata", {running});
  EXPECT_EQ(kept.bindings.size(), 4u);
  EXPECT_EQ(Placements(*cluster, kept).at("any-share"), std::vector<std::string>{"a100-0"});
}

TEST(GangPlacerReserveTest, NeverBlocksAPodThatFitsOnlyInAShortPool) {
  // The A100 node is tainted, so the unconstrained pods (whole and shared) fit only on the T4
  // node, whose pool is short for them: more than half of the demand needs T4. They place there
  // all the same, nothing preempts, and the T4 pods take what is left.
  auto cluster = std::make_shared<Cluster>();
  cluster->nodes = {MakeNode("a100-0", "A100-80GB", 8, 64000), MakeNode("t4-0", "T4", 4, 32000)};
  cluster->nodes[0].taints.push_back({"dedicated", "other-team", TaintEffect::kNoSchedule});
  std::vector<Workload> pending = {MakeWorkload("any-whole", 0, {Gpus(1)}),
                                   MakeWorkload("any-share", 1, {Share(500)})};
  for (int i = 0; i < 2; ++i) {
    pending.push_back(MakeWorkload("t4-" + std::to_string(i), 2 + i, {Gpus(1, 1000, {"T4"})}));
  }
  const Decisions decisions = RunCycle(cluster, pending, "strata");
  EXPECT_EQ(decisions.bindings.size(), 4u);
  EXPECT_TRUE(decisions.pending.empty());
  EXPECT_TRUE(decisions.preemptions.empty());
  EXPECT_EQ(Placements(*cluster, decisions).at("any-whole"), std::vector<std::string>{"t4-0"});
}

TEST(GangPlacerReserveTest, PlacesWithoutTheReserveAGangThatFitsOnlyThatWay) {
  // One free GPU on the T4 node, two on the A100 node. The gang's first pod may go anywhere,
  // its second needs an A100 and, like the first, 40 cores. Keeping the T4 reserve (a later pod
  // needs T4) would send the first pod to the A100 node, whose cores then cannot feed the
  // second: the gang is placed as if there were no reserve (nothing is preempted for it), and
  // the T4 pod waits instead.
  auto cluster = std::make_shared<Cluster>();
  cluster->nodes = {MakeNode("a100-0", "A100-80GB", 8, 64000), MakeNode("t4-0", "T4", 4, 48000)};
  RunningWorkload held_a100{MakeWorkload("held-a100", 0, {Gpus(6, 0)}), -1, {}, {}, {}, 0};
  held_a100.pods = {{0, 0, 0, {0, 1, 2, 3, 4, 5}}};
  RunningWorkload held_t4{MakeWorkload("held-t4", 0, {Gpus(3, 0)}), -1, {}, {}, {}, 0};
  held_t4.pods = {{0, 0, 1, {0, 1, 2}}};
  PodSet second = Gpus(1, 40000, {"A100-80GB"});
  // The gang outranks what runs: had the reserve made it fail, it would preempt.
  std::vector<Workload> pending = {MakeWorkload("gang", 1, {Gpus(1, 40000), second}),
                                   MakeWorkload("t4-later", 2, {Gpus(1, 1000, {"T4"})})};
  pending[0].priority = 1;
  const Decisions decisions = RunCycle(cluster, pending, "strata", {held_a100, held_t4});
  const auto placements = Placements(*cluster, decisions);
  ASSERT_TRUE(placements.contains("gang"));
  EXPECT_EQ(placements.at("gang"), (std::vector<std::string>{"t4-0", "a100-0"}));
  EXPECT_FALSE(placements.contains("t4-later"));
  EXPECT_TRUE(decisions.preemptions.empty());
}

TEST(GangPlacerReserveTest, PoolSumsFollowPlaceAndUnplace) {
  const auto cluster = SmallPoolCluster();
  CapacityIndex index(*cluster);
  const int a100 = index.PoolOf(0);
  const int t4 = index.PoolOf(2);
  ASSERT_NE(a100, t4);
  EXPECT_EQ(index.PoolOf(1), a100);
  EXPECT_EQ(index.pool_free_milli()[a100], 16000);
  EXPECT_EQ(index.pool_free_milli()[t4], 4000);
  EXPECT_EQ(index.free_milli(), 20000);

  // Half the demand needs T4, so the T4 pool keeps a reserve.
  PoolDemand observed(index.pools());
  observed.Add(GpuPodRequest{1000, 1024, 1, 1000, {"T4"}}, 2);
  observed.Add(GpuPodRequest{1000, 1024, 1, 1000, {}}, 2);
  const PoolReserve reserve(observed);
  ASSERT_TRUE(reserve.Active());
  const WorkloadMix mix;
  auto policy = MakePlacementPolicy("strata", &mix, nullptr);
  ASSERT_TRUE(policy.has_value());
  GangPlacer placer(index, **policy, &reserve);
  Workload w = MakeWorkload("mixed", 0, {Gpus(2), Share(300), Gpus(1, 1000, {"T4"})});
  GangOutcome outcome = placer.Place(w, FitContext{}, false);
  ASSERT_TRUE(outcome.placed);
  EXPECT_EQ(index.pool_free_milli()[a100], 16000 - 2000 - 300);
  EXPECT_EQ(index.pool_free_milli()[t4], 4000 - 1000);
  EXPECT_EQ(index.free_milli(), 20000 - 3300);
  placer.Unplace(w, &outcome.pods);
  EXPECT_EQ(index.pool_free_milli()[a100], 16000);
  EXPECT_EQ(index.pool_free_milli()[t4], 4000);
  EXPECT_EQ(index.free_milli(), 20000);
}

}  // namespace
}  // namespace strata::scheduler
