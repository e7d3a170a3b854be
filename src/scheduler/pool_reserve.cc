#include "scheduler/pool_reserve.h"

#include <algorithm>
#include <limits>
#include <tuple>

namespace strata::scheduler {

PoolReserve::PoolReserve(std::span<const GpuPodRequest> observed,
                         std::span<const GpuNodeFree> nodes)
    : PoolReserve([&] {
        PoolDemand demand(std::make_shared<const NodePools>(nodes));
        for (const GpuPodRequest& pod : observed) demand.Add(pod, 1);
        return demand;
      }()) {}

PoolReserve::PoolReserve(const PoolDemand& observed)
    : pools_(observed.pools()), share_(pools_->pool_count(), 0) {
  // Pods of one shape need the same pools: the demand is summed per shape, each looked up once.
  const auto total_demand = static_cast<double>(observed.total_milli());
  std::vector<int> hosting;
  for (const auto& [key, demand] : observed.constrained_milli()) {
    GpuPodRequest shape;
    std::tie(shape.cpu_milli, shape.memory_mib, shape.gpu_count, shape.gpu_milli_each,
             shape.allowed_gpu_models) = key;
    hosting.clear();
    int64_t hosting_gpus = 0;
    for (int pool = 0; pool < pool_count(); ++pool) {
      if (!Fits(pools_->KindOf(pool), shape)) continue;
      hosting.push_back(pool);
      hosting_gpus += pools_->GpusOf(pool);
    }
    if (hosting.empty()) continue;
    for (int pool : hosting) {
      share_[pool] += static_cast<double>(demand) * static_cast<double>(pools_->GpusOf(pool)) /
                      static_cast<double>(hosting_gpus) / total_demand;
      active_ = active_ || share_[pool] > 0;
    }
  }
}

double PoolReserve::Cover(int pool, int64_t taken_milli, int64_t pool_free_milli,
                          int64_t cluster_free_milli) const {
  const double reserved = share_[pool] * static_cast<double>(cluster_free_milli - taken_milli);
  if (taken_milli == 0 || reserved <= 0) return std::numeric_limits<double>::infinity();
  return static_cast<double>(pool_free_milli - taken_milli) / reserved;
}

double PoolReserve::CoverRank(int pool, int64_t taken_milli, int64_t pool_free_milli,
                              int64_t cluster_free_milli) const {
  return std::min(1.0, Cover(pool, taken_milli, pool_free_milli, cluster_free_milli));
}

std::vector<size_t> PoolReserve::KeepCovered(const GpuPodRequest& pod,
                                             std::span<const size_t> candidates,
                                             std::span<const int64_t> pool_free_milli) const {
  int64_t cluster_free = 0;
  for (int64_t free : pool_free_milli) cluster_free += free;
  std::vector<double> rank;
  rank.reserve(candidates.size());
  double best_rank = 0;
  for (size_t node : candidates) {
    const int pool = PoolOf(node);
    rank.push_back(CoverRank(pool, pod.TotalGpuMilli(), pool_free_milli[pool], cluster_free));
    best_rank = std::max(best_rank, rank.back());
  }
  std::vector<size_t> kept;
  for (size_t k = 0; k < candidates.size(); ++k) {
    if (rank[k] >= best_rank) kept.push_back(candidates[k]);
  }
  return kept;
}

}  // namespace strata::scheduler
