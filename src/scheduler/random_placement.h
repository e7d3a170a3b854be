#pragma once

#include "scheduler/placement_policy.h"

namespace strata::scheduler {

// The artifact's Random baseline: a uniformly drawn feasible node; a fraction on a uniformly
// drawn GPU with room, whole GPUs on the lowest-indexed free ones. Draws from the caller's RNG,
// which must outlive it. Not thread-safe.
class RandomPlacement final : public PlacementPolicy {
 public:
  explicit RandomPlacement(PlacementRng* rng) : rng_(rng) {}

  std::string_view name() const override { return "random"; }
  // Draws the GPU (for a fraction): call it once, for the node DrawNode chose.
  ScoredPlacement Score(const PlacementNode& node, const GpuPodRequest& pod) override;
  std::optional<size_t> DrawNode(size_t feasible_count) override;

 private:
  PlacementRng* rng_;
};

}  // namespace strata::scheduler
