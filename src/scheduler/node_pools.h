#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "scheduler/fragmentation.h"

namespace strata::scheduler {

// The pools of a cluster: its nodes grouped by kind (GPU model, GPU count, CPU and memory), each
// node as it is when empty. What PoolReserve keeps reserves for; the capacity index keeps each
// pool's free milli-GPU. Constant once built; thread-safe.
class NodePools {
 public:
  // The pools of `nodes` (each node empty: its full capacity), numbered by first appearance.
  // `gpu_memory_mib`, when given, is the memory of each node's GPUs (by node, 0 for none).
  explicit NodePools(std::span<const GpuNodeFree> nodes,
                     std::span<const int64_t> gpu_memory_mib = {});

  int pool_count() const { return static_cast<int>(kinds_.size()); }
  size_t node_count() const { return pool_of_node_.size(); }
  // The pool of the node at `node_index` in the constructor's `nodes`, 0..pool_count()-1.
  int PoolOf(size_t node_index) const { return pool_of_node_[node_index]; }
  // One node of `pool`, empty.
  const GpuNodeFree& KindOf(int pool) const { return kinds_[pool]; }
  // The GPUs of every node of `pool` together.
  int64_t GpusOf(int pool) const { return gpus_[pool]; }
  // True when an empty node of `pool` has milli-GPU a GPU pod could take (not CPU-only nodes,
  // not nodes whose GPUs all serve MIG instances only).
  bool HostsGpuPods(int pool) const { return hosts_gpu_pods_[pool]; }
  // How many pools HostsGpuPods.
  int gpu_pool_count() const { return gpu_pool_count_; }

  // True when every pool that HostsGpuPods could hold `pod` (a GPU pod) on an empty node: then
  // no pool has to keep anything for it. Without a model constraint this is a comparison with
  // the smallest such pool; with one, a look at each pool.
  bool HostedByEveryGpuPool(const GpuPodRequest& pod) const;

  // The GPU models of the pools whose GPUs have at least `memory_mib` (sorted, each once); empty
  // when the constructor was not told the GPUs' memory.
  std::vector<std::string> ModelsWithMemoryAtLeast(int64_t memory_mib) const;

 private:
  std::vector<int> pool_of_node_;
  std::vector<GpuNodeFree> kinds_;       // by pool
  std::vector<int64_t> gpus_;            // by pool
  std::vector<bool> hosts_gpu_pods_;     // by pool
  std::vector<int64_t> gpu_memory_mib_;  // by pool, the most of its nodes; empty when not told
  int gpu_pool_count_ = 0;
  // Over the pools that HostsGpuPods: the least CPU, memory and GPUs free for any pod (an empty
  // node's GPUs are wholly free, or MIG-only and take no pod of these).
  int64_t min_cpu_milli_ = 0;
  int64_t min_memory_mib_ = 0;
  int32_t min_whole_gpus_ = 0;
};

}  // namespace strata::scheduler
