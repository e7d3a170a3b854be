#include "scheduler/best_fit_placement.h"

#include "scheduler/baseline_scales.h"

namespace strata::scheduler {

ScoredPlacement BestFitPlacement::Score(const PlacementNode& node, const GpuPodRequest& pod) {
  const double slack =
      0.5 * static_cast<double>(node.free.cpu_milli - pod.cpu_milli) / kBaselineCpuScale +
      0.5 * static_cast<double>(GpuMilliLeft(node.free) - pod.TotalGpuMilli()) / kBaselineGpuScale;
  return {TightestFitGpus(node.free, pod), static_cast<int64_t>(kBaselineMaxScore * (1 - slack))};
}

}  // namespace strata::scheduler
