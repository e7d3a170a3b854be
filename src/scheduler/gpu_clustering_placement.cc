#include "scheduler/gpu_clustering_placement.h"

#include <cmath>

#include "scheduler/baseline_scales.h"

namespace strata::scheduler {

ScoredPlacement GpuClusteringPlacement::Score(const PlacementNode& node, const GpuPodRequest& pod) {
  ScoredPlacement result{TightestFitGpus(node.free, pod), 0};
  if (pod.gpu_count == 0) return result;
  const int64_t base = static_cast<int64_t>(
      std::floor(25 * (kBaselineGpuScale - GpuMilliLeft(node.free)) / kBaselineGpuScale));
  const int32_t tag = GpuPodTag(pod);
  if (node.gpu_pod_tags.empty()) {
    result.score = base + 25;
  } else if (!node.gpu_pod_tags.contains(tag)) {
    result.score = base;
  } else {
    result.score = base + (node.gpu_pod_tags.size() == 1 ? 75 : 50);
  }
  return result;
}

}  // namespace strata::scheduler
