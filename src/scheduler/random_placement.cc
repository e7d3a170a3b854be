#include "scheduler/random_placement.h"

namespace strata::scheduler {

ScoredPlacement RandomPlacement::Score(const PlacementNode& node, const GpuPodRequest& pod) {
  const GpuNodeFree& free = node.free;
  if (!pod.IsFractional()) {
    return {pod.gpu_count == 0 ? std::vector<int>()
                               : LowestIndexedFitting(free, pod.gpu_count, pod.gpu_milli_each),
            0};
  }
  std::vector<int> fitting;
  for (int i = 0; i < static_cast<int>(free.gpu_milli.size()); ++i) {
    if (free.gpu_milli[i] >= pod.gpu_milli_each) fitting.push_back(i);
  }
  return {{fitting[DrawBelow(*rng_, fitting.size())]}, 0};
}

std::optional<size_t> RandomPlacement::DrawNode(size_t feasible_count) {
  return DrawBelow(*rng_, feasible_count);
}

}  // namespace strata::scheduler
