#pragma once

#include "scheduler/placement_policy.h"

namespace strata::scheduler {

// strata's placement: PlanPlacement's GPUs (the least increase of the CPU-aware expected
// fragmentation for the workload mix) scored by PlacementScore (fragmentation.h). The gang
// placer uses it for shares; the openb replay compares it with the baselines. Holds a reference
// to the mix, which must outlive it. Pure otherwise.
class FragmentationPlacement final : public PlacementPolicy {
 public:
  explicit FragmentationPlacement(const WorkloadMix& mix) : mix_(mix) {}

  std::string_view name() const override { return "strata"; }
  ScoredPlacement Score(const PlacementNode& node, const GpuPodRequest& pod) override;

 private:
  const WorkloadMix& mix_;
};

}  // namespace strata::scheduler
