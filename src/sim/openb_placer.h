#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "scheduler/fragmentation.h"
#include "scheduler/placement_policy.h"
#include "scheduler/pool_reserve.h"

namespace strata::sim {

// The replay's random source: seeded once per run, so a run is deterministic for its seed.
using OpenbRng = scheduler::PlacementRng;

// One node of the replayed cluster: what the placement policies see, and a version bumped
// whenever a pod lands, so that cached scores know they are stale.
struct OpenbSimNode {
  scheduler::PlacementNode node;
  int64_t version = 0;
};

// A pod as the replay places it.
struct OpenbSimPod {
  scheduler::GpuPodRequest request;
  // Pods with equal ids ask for equal CPU, GPUs and models (memory may differ). 0..shape_count-1.
  int shape_id = 0;
};

// Where a pod goes: a node index and the GPUs it takes there (ascending; empty for CPU only).
struct OpenbChoice {
  size_t node = 0;
  std::vector<int> gpu_indices;
};

// Chooses the node and GPUs for each pod of one replay with one placement policy
// (scheduler/placement_policy.h). Among feasible nodes the best score wins and ties go to the
// lowest `node_rank` (the artifact's seed-random node order); a policy that draws (Random) picks
// among them itself. For a policy that keeps pool reserves, only the feasible nodes of pools that
// keep their reserve (scheduler::PoolReserve) compete, or if none does, those of the pools that
// cover it best. Scores are kept per node and pod shape until the node changes. Owned by one
// replay; not thread-safe.
class OpenbPlacer {
 public:
  // `node_rank` is a permutation of the node indices; `shape_count` bounds OpenbSimPod::shape_id;
  // `reserve` is the pool reserve of `nodes` (Choose's), used when the policy keeps one.
  OpenbPlacer(std::unique_ptr<scheduler::PlacementPolicy> policy, std::vector<uint32_t> node_rank,
              int shape_count, scheduler::PoolReserve reserve);

  // The choice for `pod` on `nodes` (which must be the same nodes, in the same order, at every
  // call), or nullopt when no node can take it.
  std::optional<OpenbChoice> Choose(const std::vector<OpenbSimNode>& nodes, const OpenbSimPod& pod);

 private:
  // A node's placement for one pod shape; valid while the node's version is `version`.
  struct CachedScore {
    int64_t version = -1;
    scheduler::ScoredPlacement placement;
  };

  const CachedScore& Score(const OpenbSimNode& node, size_t node_index, const OpenbSimPod& pod);
  // Keeps in feasible_ the nodes that PoolReserve::KeepCovered keeps.
  void KeepReserve(const std::vector<OpenbSimNode>& nodes, const OpenbSimPod& pod);

  std::unique_ptr<scheduler::PlacementPolicy> policy_;
  std::vector<uint32_t> node_rank_;
  int shape_count_;
  scheduler::PoolReserve reserve_;
  std::vector<size_t> feasible_;
  std::vector<int64_t> pool_free_;  // free milli-GPU by pool
  std::vector<CachedScore> cache_;  // [node * shape_count + shape]
};

}  // namespace strata::sim
