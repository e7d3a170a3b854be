#pragma once

#include "scheduler/placement_policy.h"

namespace strata::scheduler {

// The artifact's GpuPacking baseline: fill partly used GPUs first, then partly used nodes, then
// empty nodes. On a node with every GPU free: max(33 - free, free); else, taking the fitting
// GPUs with the least remaining first: when one taken is free, max(50 - free taken, 33); else
// max(100 - (sum of their remaining in % of a GPU) / 10, 50). CPU-only pods score 0. GPUs by
// TightestFitGpus. Pure; stateless.
class GpuPackingPlacement final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "packing"; }
  ScoredPlacement Score(const PlacementNode& node, const GpuPodRequest& pod) override;
};

}  // namespace strata::scheduler
