#include "scheduler/pool_reserve.h"

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <vector>

#include "scheduler/held_capacity.h"
#include "scheduler/pool_demand.h"

namespace strata::scheduler {
namespace {

GpuPodRequest Pod(int32_t count, int32_t milli, int64_t cpu_milli = 4000,
                  std::vector<std::string> models = {}) {
  GpuPodRequest pod;
  pod.cpu_milli = cpu_milli;
  pod.memory_mib = 1024;
  pod.gpu_count = count;
  pod.gpu_milli_each = milli;
  pod.allowed_gpu_models = std::move(models);
  return pod;
}

GpuNodeFree Node(std::string model, int gpus, int64_t cpu_milli = 32000) {
  return GpuNodeFree{.gpu_model = std::move(model),
                     .cpu_milli = cpu_milli,
                     .memory_mib = 65536,
                     .gpu_milli = std::vector<int32_t>(gpus, kMilliGpuPerGpu)};
}

TEST(PoolReserveTest, NodesOfOneKindFormAPool) {
  const std::vector<GpuNodeFree> nodes = {Node("G2", 8), Node("T4", 2), Node("G2", 8),
                                          Node("G2", 8, 96000)};
  const PoolReserve reserve(std::vector<GpuPodRequest>(), nodes);
  EXPECT_EQ(reserve.pool_count(), 3);
  EXPECT_EQ(reserve.PoolOf(0), reserve.PoolOf(2));
  EXPECT_NE(reserve.PoolOf(0), reserve.PoolOf(1));
  EXPECT_NE(reserve.PoolOf(0), reserve.PoolOf(3));  // more CPU: another kind
}

TEST(PoolReserveTest, ReserveIsTheDemandOnlyThePoolCanHold) {
  // Two G2 nodes (16 GPUs, 64 cores each), a T4 node (2 GPUs) and a V100 node (4 GPUs, 32 cores).
  // Of 10 GPUs demanded: 1 may run anywhere; 1 only on T4; 4 in one pod of 40 cores, which only
  // a G2 node holds; 4 in two pods that may use G2 or T4, shared 16:2 by the pools' GPUs.
  // CPU-only pods add nothing.
  const std::vector<GpuNodeFree> nodes = {Node("G2", 8, 64000), Node("G2", 8, 64000), Node("T4", 2),
                                          Node("V100M32", 4)};
  const std::vector<GpuPodRequest> observed = {
      Pod(1, 1000),        Pod(1, 500, 4000, {"T4"}),        Pod(1, 500, 4000, {"T4"}),
      Pod(4, 1000, 40000), Pod(2, 1000, 4000, {"G2", "T4"}), Pod(2, 1000, 4000, {"G2", "T4"}),
      Pod(0, 0, 16000)};
  const PoolReserve reserve(observed, nodes);
  EXPECT_DOUBLE_EQ(reserve.ShareOf(reserve.PoolOf(0)), (4.0 + 4.0 * 16 / 18) / 10);
  EXPECT_DOUBLE_EQ(reserve.ShareOf(reserve.PoolOf(2)), (1.0 + 4.0 * 2 / 18) / 10);
  EXPECT_DOUBLE_EQ(reserve.ShareOf(reserve.PoolOf(3)), 0);
}

TEST(PoolReserveTest, CoverIsWhatAPodWouldLeaveThePoolOverItsShareOfTheFreeGpus) {
  // Half the demand can only run on T4.
  const std::vector<GpuNodeFree> nodes = {Node("G2", 8), Node("T4", 2)};
  const std::vector<GpuPodRequest> observed = {Pod(1, 1000, 4000, {"T4"}),
                                               Pod(1, 1000, 4000, {"G2"})};
  const PoolReserve reserve(observed, nodes);
  const int t4 = reserve.PoolOf(1);
  ASSERT_DOUBLE_EQ(reserve.ShareOf(t4), 0.5);
  // T4 2000 free of 4000: a whole GPU there leaves 1000 of the 0.5 x 3000 reserved: short.
  EXPECT_DOUBLE_EQ(reserve.Cover(t4, Pod(1, 1000), 2000, 4000), 1000.0 / 1500);
  // 2000 of 3000: leaves 1000 for 0.5 x 2000: covered.
  EXPECT_DOUBLE_EQ(reserve.Cover(t4, Pod(1, 1000), 2000, 3000), 1);
  // A CPU-only pod takes no GPU; the last free GPU leaves nothing to reserve.
  EXPECT_EQ(reserve.Cover(t4, Pod(0, 0), 0, 4000), std::numeric_limits<double>::infinity());
  EXPECT_EQ(reserve.Cover(t4, Pod(1, 1000), 1000, 1000), std::numeric_limits<double>::infinity());
}

TEST(PoolReserveTest, KeepsNodesOfPoolsThatKeepTheirReserveElseOfThoseThatCoverItBest) {
  // Nodes 0-1: G2 (16 GPUs), 2: T4, 3: V100. A quarter of the demand needs T4, half needs V100.
  const std::vector<GpuNodeFree> nodes = {Node("G2", 8), Node("G2", 8), Node("T4", 2),
                                          Node("V100M32", 4)};
  const std::vector<GpuPodRequest> observed = {Pod(1, 1000, 4000, {"T4"}),
                                               Pod(1, 1000, 4000, {"V100M32"}),
                                               Pod(1, 1000, 4000, {"V100M32"}), Pod(1, 1000)};
  const PoolReserve reserve(observed, nodes);
  std::vector<int64_t> pool_free(reserve.pool_count());
  pool_free[reserve.PoolOf(0)] = 16000;
  pool_free[reserve.PoolOf(2)] = 2000;
  pool_free[reserve.PoolOf(3)] = 4000;
  const std::vector<size_t> all = {0, 1, 2, 3};
  // 21000 free after a GPU: T4 keeps 1000 of 5250 reserved, V100 3000 of 10500; G2 has none.
  EXPECT_EQ(reserve.KeepCovered(Pod(1, 1000), all, pool_free), (std::vector<size_t>{0, 1}));
  // Without G2, V100 covers its reserve better than T4 (3000 / 10500 > 1000 / 5250).
  EXPECT_EQ(reserve.KeepCovered(Pod(1, 1000), std::vector<size_t>{2, 3}, pool_free),
            (std::vector<size_t>{3}));
  // A CPU-only pod takes no GPU: every node stays.
  EXPECT_EQ(reserve.KeepCovered(Pod(0, 0), all, pool_free), all);
}

TEST(PoolReserveTest, NoPoolIsShortWhenEveryPodCouldRunAnywhere) {
  const std::vector<GpuNodeFree> nodes = {Node("G2", 8), Node("T4", 2)};
  const std::vector<GpuPodRequest> observed = {Pod(1, 1000), Pod(1, 300), Pod(0, 0)};
  const PoolReserve reserve(observed, nodes);
  for (int pool = 0; pool < reserve.pool_count(); ++pool) {
    EXPECT_DOUBLE_EQ(reserve.ShareOf(pool), 0);
    EXPECT_EQ(reserve.Cover(pool, Pod(1, 1000), 1000, 10000),
              std::numeric_limits<double>::infinity());
  }
}

TEST(PoolDemandTest, TakesBackWhatItAdded) {
  const std::vector<GpuNodeFree> nodes = {Node("G2", 8), Node("T4", 2)};
  PoolDemand demand(std::make_shared<const NodePools>(nodes));
  demand.Add(Pod(1, 1000, 4000, {"T4"}), 3);
  demand.Add(Pod(1, 500), 2);
  demand.Add(Pod(0, 0, 16000), 5);  // CPU only: nothing
  EXPECT_EQ(demand.total_milli(), 4000);
  EXPECT_EQ(demand.constrained_milli().size(), 1u);  // the share may run anywhere
  demand.Add(Pod(1, 1000, 4000, {"T4"}), -3);
  EXPECT_EQ(demand.total_milli(), 1000);
  EXPECT_TRUE(demand.constrained_milli().empty());
}

scheduler::Node MakeGpuNode(std::string name, std::string model, int64_t gpu_memory_mib) {
  scheduler::Node node;
  node.name = std::move(name);
  node.cpu_milli = 64000;
  node.memory_bytes = int64_t{256} << 30;
  node.gpus.assign(8, Gpu{model, gpu_memory_mib, 0, false});
  return node;
}

TEST(PoolDemandTest, AGpuMemoryFloorCountsAsTheModelsThatHaveItAndHeldWorkloadsAreKept) {
  auto cluster = std::make_shared<Cluster>();
  cluster->nodes = {MakeGpuNode("a100", "A100-40GB", 40960),
                    MakeGpuNode("h100", "H100-80GB", 81920)};
  HeldCapacity held(cluster);
  const int a100 = held.index().PoolOf(0);
  const int h100 = held.index().PoolOf(1);
  // One pod that needs 60 GiB GPUs (only the H100s have them) and one that may run anywhere.
  RunningWorkload running;
  running.workload.name = "big-memory";
  running.workload.pod_sets.resize(2);
  running.workload.pod_sets[0].gpu.count = 2;
  running.workload.pod_sets[0].gpu.min_memory_mib = 61440;
  running.workload.pod_sets[1].gpu.count = 2;
  running.pods = {{0, 0, 1, {0, 1}}, {1, 0, 0, {0, 1}}};
  ASSERT_TRUE(held.Hold(running));
  EXPECT_EQ(held.running_demand().total_milli(), 4000);
  const PoolReserve reserve(held.running_demand());
  EXPECT_DOUBLE_EQ(reserve.ShareOf(h100), 0.5);
  EXPECT_DOUBLE_EQ(reserve.ShareOf(a100), 0);
  held.Free(running);
  EXPECT_EQ(held.running_demand().total_milli(), 0);
  EXPECT_TRUE(held.running_demand().constrained_milli().empty());
}

}  // namespace
}  // namespace strata::scheduler
