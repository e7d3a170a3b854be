#pragma once

#include "scheduler/placement_policy.h"

namespace strata::scheduler {

// The artifact's GpuClustering baseline: pods go where pods of their own shape already are (a
// fraction, or k whole GPUs). base = floor(25 x GPU used share of an 8-GPU node); +75 when the
// node holds only the pod's shape, +50 when among others, +25 on a node without GPU pods, +0
// otherwise; CPU-only pods score 0 everywhere. GPUs by TightestFitGpus. Pure; stateless.
class GpuClusteringPlacement final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "clustering"; }
  ScoredPlacement Score(const PlacementNode& node, const GpuPodRequest& pod) override;
};

}  // namespace strata::scheduler
