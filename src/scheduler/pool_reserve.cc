#include "scheduler/pool_reserve.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>

namespace strata::scheduler {
namespace {

std::vector<CountedPodShape> OnePodEach(std::span<const GpuPodRequest> observed) {
  std::vector<CountedPodShape> counted;
  counted.reserve(observed.size());
  for (const GpuPodRequest& pod : observed) counted.push_back({pod, 1});
  return counted;
}

}  // namespace

PoolReserve::PoolReserve(std::span<const GpuPodRequest> observed,
                         std::span<const GpuNodeFree> nodes)
    : PoolReserve(OnePodEach(observed), std::make_shared<const NodePools>(nodes)) {}

PoolReserve::PoolReserve(std::span<const CountedPodShape> observed,
                         std::shared_ptr<const NodePools> pools)
    : pools_(std::move(pools)), share_(pools_->pool_count(), 0) {
  // Pods of one shape need the same pools: sum the demand per shape, then look each up once.
  // Shapes every pool with GPUs could hold only count toward the total, so a cluster whose
  // demand is mostly unconstrained pays a comparison per shape, not a map look-up.
  using ShapeKey = std::tuple<int64_t, int64_t, int32_t, int32_t, std::vector<std::string>>;
  std::map<ShapeKey, int64_t> demand_by_shape;
  int64_t total_demand = 0;
  for (const CountedPodShape& counted : observed) {
    const GpuPodRequest& pod = counted.shape;
    if (pod.gpu_count == 0 || counted.pods <= 0) continue;
    const int64_t demand = pod.TotalGpuMilli() * counted.pods;
    total_demand += demand;
    if (pools_->HostedByEveryGpuPool(pod)) continue;
    demand_by_shape[ShapeKey(pod.cpu_milli, pod.memory_mib, pod.gpu_count, pod.gpu_milli_each,
                             pod.allowed_gpu_models)] += demand;
  }
  std::vector<int> hosting;
  for (const auto& [key, demand] : demand_by_shape) {
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
                      static_cast<double>(hosting_gpus) / static_cast<double>(total_demand);
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
