#pragma once

#include "scheduler/placement_policy.h"

namespace strata::scheduler {

// The artifact's FGD ("Beware of Fragmentation", ATC'23): the decrease of the node's expected
// fragmentation for the workload mix (FragmentationModel::kSinglePod, FGD's own measure),
// squashed to trunc(100 x sigmoid(decrease / 1000)). A fraction tries every GPU it fits on and
// keeps the best (lowest index among equals); whole GPUs take the lowest-indexed free ones.
// Holds a reference to the mix, which must outlive it. Pure otherwise.
// FGD's node score for a placement that lowers the node's FGD fragmentation by
// `decrease_milli` (negative when it raises it): trunc(100 x sigmoid(decrease / 1000)), 0..100.
int64_t FgdScoreOfDecrease(double decrease_milli);

class FgdPlacement final : public PlacementPolicy {
 public:
  explicit FgdPlacement(const WorkloadMix& mix) : mix_(mix) {}

  std::string_view name() const override { return "fgd"; }
  ScoredPlacement Score(const PlacementNode& node, const GpuPodRequest& pod) override;

 private:
  const WorkloadMix& mix_;
};

}  // namespace strata::scheduler
