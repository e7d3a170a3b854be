#include "scheduler/pool_reserve.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>

namespace strata::scheduler {

PoolReserve::PoolReserve(std::span<const GpuPodRequest> observed,
                         std::span<const GpuNodeFree> nodes) {
  using NodeKind = std::tuple<std::string, size_t, int64_t, int64_t>;
  std::map<NodeKind, int> pool_ids;
  std::vector<const GpuNodeFree*> pool_node;  // one node of each pool
  std::vector<int64_t> pool_gpus;
  for (const GpuNodeFree& node : nodes) {
    const NodeKind kind(node.gpu_model, node.gpu_milli.size(), node.cpu_milli, node.memory_mib);
    const auto [it, inserted] = pool_ids.emplace(kind, static_cast<int>(pool_ids.size()));
    if (inserted) {
      pool_node.push_back(&node);
      pool_gpus.push_back(0);
    }
    pool_gpus[it->second] += static_cast<int64_t>(node.gpu_milli.size());
    pool_of_node_.push_back(it->second);
  }
  share_.assign(pool_ids.size(), 0);

  // Pods of one shape need the same pools: sum the demand per shape, then look each up once.
  using ShapeKey = std::tuple<int64_t, int64_t, int32_t, int32_t, std::vector<std::string>>;
  std::map<ShapeKey, int64_t> demand_by_shape;
  int64_t total_demand = 0;
  for (const GpuPodRequest& pod : observed) {
    if (pod.gpu_count == 0) continue;
    demand_by_shape[ShapeKey(pod.cpu_milli, pod.memory_mib, pod.gpu_count, pod.gpu_milli_each,
                             pod.allowed_gpu_models)] += pod.TotalGpuMilli();
    total_demand += pod.TotalGpuMilli();
  }
  std::vector<int> hosting;
  for (const auto& [key, demand] : demand_by_shape) {
    GpuPodRequest shape;
    std::tie(shape.cpu_milli, shape.memory_mib, shape.gpu_count, shape.gpu_milli_each,
             shape.allowed_gpu_models) = key;
    hosting.clear();
    int64_t hosting_gpus = 0;
    for (int pool = 0; pool < pool_count(); ++pool) {
      if (!Fits(*pool_node[pool], shape)) continue;
      hosting.push_back(pool);
      hosting_gpus += pool_gpus[pool];
    }
    if (hosting.empty() || hosting.size() == share_.size()) continue;
    for (int pool : hosting) {
      share_[pool] += static_cast<double>(demand) * static_cast<double>(pool_gpus[pool]) /
                      static_cast<double>(hosting_gpus) / static_cast<double>(total_demand);
    }
  }
}

double PoolReserve::Cover(int pool, const GpuPodRequest& pod, int64_t pool_free_milli,
                          int64_t cluster_free_milli) const {
  const int64_t taken = pod.TotalGpuMilli();
  const double reserved = share_[pool] * static_cast<double>(cluster_free_milli - taken);
  if (taken == 0 || reserved <= 0) return std::numeric_limits<double>::infinity();
  return static_cast<double>(pool_free_milli - taken) / reserved;
}

std::vector<size_t> PoolReserve::KeepCovered(const GpuPodRequest& pod,
                                             std::span<const size_t> candidates,
                                             std::span<const int64_t> pool_free_milli) const {
  int64_t cluster_free = 0;
  for (int64_t free : pool_free_milli) cluster_free += free;
  std::vector<double> cover;
  cover.reserve(candidates.size());
  double best_cover = 0;
  for (size_t node : candidates) {
    const int pool = PoolOf(node);
    cover.push_back(Cover(pool, pod, pool_free_milli[pool], cluster_free));
    best_cover = std::max(best_cover, cover.back());
  }
  const double enough = std::min(1.0, best_cover);
  std::vector<size_t> kept;
  for (size_t k = 0; k < candidates.size(); ++k) {
    if (cover[k] >= enough) kept.push_back(candidates[k]);
  }
  return kept;
}

}  // namespace strata::scheduler
