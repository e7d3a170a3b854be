#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "scheduler/fragmentation.h"

namespace strata::sim {

// Node-choice policies of the openb replay: `strata` is the scheduler's own fragmentation scorer
// (scheduler/fragmentation.h, the code path the scheduler core calls); the others re-implement
// the FGD artifact's baselines from their published description
// (random, dotprod, clustering, packing, bestfit, fgd).
enum class OpenbPolicy { kRandom, kDotProd, kClustering, kPacking, kBestFit, kFgd, kStrata };

// Every policy, baselines first, in the artifact's order, then strata.
std::vector<OpenbPolicy> AllOpenbPolicies();
// "random", "dotprod", "clustering", "packing", "bestfit", "fgd", "strata".
std::string_view OpenbPolicyName(OpenbPolicy policy);
// The policy named `name`; InvalidArgument listing the valid names otherwise.
Result<OpenbPolicy> ParseOpenbPolicy(std::string_view name);

// The replay's random source: seeded once per run, so a run is deterministic for its seed.
using OpenbRng = std::mt19937_64;

// A uniform draw from [0, n). REQUIRES: n > 0.
uint64_t DrawBelow(OpenbRng& rng, uint64_t n);

// One node of the replayed cluster.
struct OpenbSimNode {
  scheduler::GpuNodeFree free;
  // Shapes of the GPU pods on the node, for GpuClustering: kShareTag for a fraction, k for k
  // whole GPUs.
  std::set<int32_t> gpu_pod_tags;
  // Bumped whenever a pod lands, so that cached scores know they are stale.
  int64_t version = 0;
};

// GpuClustering's tag for a pod that takes a fraction of one GPU.
inline constexpr int32_t kShareTag = -1;

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

// Chooses the node and GPUs for each pod of one replay under one policy. Among feasible nodes the
// best score wins and ties go to the lowest `node_rank` (the artifact's seed-random node order).
// Owned by one replay, which owns the RNG it draws from; not thread-safe (it caches scores).
class OpenbPlacer {
 public:
  // `mix` is the workload mix FGD and strata score against; `node_rank` is a permutation of the
  // node indices; `shape_count` bounds OpenbSimPod::shape_id. `rng` must outlive the placer.
  OpenbPlacer(OpenbPolicy policy, scheduler::WorkloadMix mix, std::vector<uint32_t> node_rank,
              int shape_count, OpenbRng* rng);

  // The choice for `pod` on `nodes` (which must be the same nodes, in the same order, at every
  // call), or nullopt when no node can take it.
  std::optional<OpenbChoice> Choose(const std::vector<OpenbSimNode>& nodes, const OpenbSimPod& pod);

 private:
  // A node's score for one pod shape and the GPUs it would take; valid while the node's version
  // is `version`.
  struct CachedScore {
    int64_t version = -1;
    int64_t score = 0;                  // the baselines' 0..100 score; higher is better
    scheduler::GpuPlacement placement;  // strata compares these; every policy's GPUs are here
  };

  bool IsBetter(const CachedScore& a, const CachedScore& b) const;
  std::optional<OpenbChoice> ChooseRandom(const std::vector<OpenbSimNode>& nodes,
                                          const OpenbSimPod& pod);
  const CachedScore& Score(const OpenbSimNode& node, size_t node_index, const OpenbSimPod& pod);
  CachedScore ComputeScore(const OpenbSimNode& node, const scheduler::GpuPodRequest& pod) const;

  OpenbPolicy policy_;
  scheduler::WorkloadMix mix_;
  std::vector<uint32_t> node_rank_;
  int shape_count_;
  OpenbRng* rng_;
  std::vector<CachedScore> cache_;  // [node * shape_count + shape]
};

}  // namespace strata::sim
