#include "scheduler/dot_product_placement.h"

#include "scheduler/baseline_scales.h"

namespace strata::scheduler {

ScoredPlacement DotProductPlacement::Score(const PlacementNode& node, const GpuPodRequest& pod) {
  const double dot = (static_cast<double>(node.free.cpu_milli) / kBaselineCpuScale) *
                         (static_cast<double>(pod.cpu_milli) / kBaselineCpuScale) +
                     (static_cast<double>(GpuMilliLeft(node.free)) / kBaselineGpuScale) *
                         (static_cast<double>(pod.TotalGpuMilli()) / kBaselineGpuScale);
  return {TightestFitGpus(node.free, pod), static_cast<int64_t>(kBaselineMaxScore * (1 - dot / 2))};
}

}  // namespace strata::scheduler
