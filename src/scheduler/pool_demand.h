#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "scheduler/fragmentation.h"
#include "scheduler/model.h"
#include "scheduler/node_pools.h"

namespace strata::scheduler {

// The observed GPU demand a PoolReserve (pool_reserve.h) is built for: the milli-GPU of every GPU
// pod seen, and of the shapes that not every pool with GPUs could hold, the milli-GPU by shape.
// Pods come and go: the openb replay adds its trace's pods once; a scheduling cycle adds what
// waits to what runs, which HeldCapacity keeps between cycles. A value; not thread-safe.
class PoolDemand {
 public:
  explicit PoolDemand(std::shared_ptr<const NodePools> pools);

  // Adds the demand of `pods` pods of `shape` (`pods` < 0 takes it back). CPU-only shapes add
  // nothing; shapes every pool with GPUs could hold add to the total only.
  void Add(GpuPodRequest shape, int64_t pods);

  const std::shared_ptr<const NodePools>& pools() const { return pools_; }
  int64_t total_milli() const { return total_milli_; }
  // (CPU, memory, GPU count, milli-GPU each, allowed models) -> milli-GPU demanded.
  using ShapeKey = std::tuple<int64_t, int64_t, int32_t, int32_t, std::vector<std::string>>;
  const std::map<ShapeKey, int64_t>& constrained_milli() const { return constrained_milli_; }

 private:
  std::shared_ptr<const NodePools> pools_;
  int64_t total_milli_ = 0;
  std::map<ShapeKey, int64_t> constrained_milli_;
};

// What one pod of `ps` asks of GPUs as the fragmentation measure sees it: whole GPUs, or a share
// of milli-GPU; nothing (gpu_count 0) for CPU-only pods, MIG instances and shares of GPU memory
// alone. No GPU models. Inline: a cycle calls it for every pending and running pod set.
inline GpuPodRequest ShapeOf(const PodSet& ps) {
  GpuPodRequest shape;
  shape.cpu_milli = ps.cpu_milli;
  shape.memory_mib = ps.memory_bytes >> 20;
  if (ps.gpu.IsWhole()) {
    shape.gpu_count = ps.gpu.count;
    shape.gpu_milli_each = kMilliGpuPerGpu;
  } else if (ps.gpu.IsShare() && ps.gpu.milli > 0) {
    shape.gpu_count = 1;
    shape.gpu_milli_each = static_cast<int32_t>(ps.gpu.milli);
  }
  return shape;
}

// Adds to `demand` the pods of every pod set of `workload` (`sign` -1 takes them back), each as
// ShapeOf with its GPU models; a GPU memory floor counts as the models whose GPUs have that much
// (NodePools::ModelsWithMemoryAtLeast).
void AddWorkloadDemand(const Workload& workload, int sign, PoolDemand* demand);

}  // namespace strata::scheduler
