#include "scheduler/pool_demand.h"

#include <algorithm>
#include <utility>

namespace strata::scheduler {

PoolDemand::PoolDemand(std::shared_ptr<const NodePools> pools) : pools_(std::move(pools)) {}

void PoolDemand::Add(GpuPodRequest shape, int64_t pods) {
  if (shape.gpu_count == 0 || pods == 0) return;
  const int64_t milli = shape.TotalGpuMilli() * pods;
  total_milli_ += milli;
  // Most demand may run anywhere: a comparison per shape, no map look-up.
  if (pools_->HostedByEveryGpuPool(shape)) return;
  auto [it, inserted] = constrained_milli_.try_emplace(
      ShapeKey(shape.cpu_milli, shape.memory_mib, shape.gpu_count, shape.gpu_milli_each,
               std::move(shape.allowed_gpu_models)),
      0);
  it->second += milli;
  if (it->second == 0) constrained_milli_.erase(it);
}

void AddWorkloadDemand(const Workload& workload, int sign, PoolDemand* demand) {
  for (const PodSet& ps : workload.pod_sets) {
    GpuPodRequest shape = ShapeOf(ps);
    if (shape.gpu_count == 0) continue;
    if (!ps.gpu.models.empty()) shape.allowed_gpu_models = ps.gpu.models;
    if (ps.gpu.min_memory_mib > 0) {
      const std::vector<std::string> enough =
          demand->pools()->ModelsWithMemoryAtLeast(ps.gpu.min_memory_mib);
      if (shape.allowed_gpu_models.empty()) {
        shape.allowed_gpu_models = enough;
      } else {
        std::erase_if(shape.allowed_gpu_models, [&](const std::string& model) {
          return std::find(enough.begin(), enough.end(), model) == enough.end();
        });
      }
      // No model has that much: the pod fits no pool, which the reserve leaves out as it is.
      if (shape.allowed_gpu_models.empty()) shape.allowed_gpu_models.push_back("");
    }
    demand->Add(std::move(shape), int64_t{sign} * ps.count);
  }
}

}  // namespace strata::scheduler
