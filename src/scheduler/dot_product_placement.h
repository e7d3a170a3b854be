#pragma once

#include "scheduler/placement_policy.h"

namespace strata::scheduler {

// The artifact's DotProd baseline: the node whose free (CPU, GPU) vector has the smallest dot
// product with the pod's request, both normalised by a 128-core, 8-GPU node; score
// trunc(100 * (1 - dot / 2)). GPUs by TightestFitGpus. Pure; stateless.
class DotProductPlacement final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "dotprod"; }
  ScoredPlacement Score(const PlacementNode& node, const GpuPodRequest& pod) override;
};

}  // namespace strata::scheduler
