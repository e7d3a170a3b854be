#pragma once

#include "scheduler/placement_policy.h"

namespace strata::scheduler {

// The artifact's BestFit baseline: the node left with the least free CPU and GPU after the pod,
// each normalised by a 128-core, 8-GPU node and weighted a half; score trunc(100 x (1 - slack)).
// GPUs by TightestFitGpus. Pure; stateless.
class BestFitPlacement final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "bestfit"; }
  ScoredPlacement Score(const PlacementNode& node, const GpuPodRequest& pod) override;
};

}  // namespace strata::scheduler
