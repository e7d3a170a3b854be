#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/model.h"

namespace strata::scheduler {

// One timed cycle over a synthetic load.
struct ThroughputResult {
  int64_t pods = 0;
  int64_t placed = 0;
  int64_t workloads = 0;
  int64_t pending = 0;
  double seconds = 0;  // the Scheduler::Cycle call alone, wall clock, single thread
};

// A generated load for throughput benchmarks (`strata bench schedule`, bench/scheduler): N
// nodes of H100-80GB GPUs (two NVLink islands each) in a 3-level topology (block / rack / host:
// 32 nodes a rack, 8 racks a block), and P pods of one shape.
struct SyntheticLoad {
  int nodes = 5000;
  int gpus_per_node = 8;
  int pods = 50000;
  // "1gpu": one 1-GPU pod per workload. "mixed": one pod per workload, 40% 1 GPU, 20% half a
  // GPU with 20 GiB, 15% 2, 15% 4, 10% 8 GPUs. "gangs": gangs of 8..256 pods of a whole node's
  // GPUs, rack preferred, in four quota queues of one cohort (quotas on). "pools": "mixed" on a
  // cluster where every 8th node is a smaller kind (4 A100-40GB, 64 cores) and one pod of 10 of
  // up to 4 GPUs needs that model, so the pool reserve (pool_reserve.h) is at work.
  std::string shape = "1gpu";
  uint64_t seed = 1;
};

// True for a shape SyntheticLoad knows.
bool IsSyntheticShape(std::string_view shape);

// The cluster; with quota queues team-0..team-3 (a quarter of the GPUs each) for "gangs".
std::shared_ptr<Cluster> MakeSyntheticCluster(const SyntheticLoad& load);

// Workloads until `load.pods` pods, submitted one second apart before `now`, deterministic for
// the seed.
std::vector<Workload> MakeSyntheticWorkloads(const SyntheticLoad& load, TimePoint now);

// Generates `load` and times one scheduling cycle over all of it on an empty cluster.
ThroughputResult MeasureThroughput(const SyntheticLoad& load);

}  // namespace strata::scheduler
