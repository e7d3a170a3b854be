#include "scheduler/fragmentation_placement.h"

#include <utility>

#include "common/check.h"

namespace strata::scheduler {

ScoredPlacement FragmentationPlacement::Score(const PlacementNode& node, const GpuPodRequest& pod) {
  std::optional<GpuPlacement> planned = PlanPlacement(node.free, pod, mix_);
  STRATA_CHECK(planned.has_value());
  const int64_t score = PlacementScore(*planned);
  return {std::move(planned->gpu_indices), score};
}

}  // namespace strata::scheduler
