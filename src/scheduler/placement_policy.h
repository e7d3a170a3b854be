#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "scheduler/fragmentation.h"

namespace strata::scheduler {

// Where the node-choice policies for GPU pods live: strata's own (fragmentation-aware, the one
// the gang placer calls for shares) and the FGD artifact's baselines, which the openb replay
// (`strata sim openb`) compares against it. One interface, one file per policy.

// The random source of the policies that draw (Random) and of the replays that drive them:
// seeded once per run, so a run is deterministic for its seed.
using PlacementRng = std::mt19937_64;

// A uniform draw from [0, n). REQUIRES: n > 0.
uint64_t DrawBelow(PlacementRng& rng, uint64_t n);

// A node as the policies see it: its free capacity and what GPU pods it already holds.
struct PlacementNode {
  GpuNodeFree free;
  // Shapes of the GPU pods on the node, for GpuClustering: kShareTag for a fraction, k for k
  // whole GPUs. Empty where the caller does not track them.
  std::set<int32_t> gpu_pod_tags;
};

// GpuClustering's tag for a pod that takes a fraction of one GPU.
inline constexpr int32_t kShareTag = -1;

// The tag `pod` leaves on its node (kShareTag for a fraction, else its GPU count).
int32_t GpuPodTag(const GpuPodRequest& pod);

// What a policy makes of one pod on one node: the GPUs it would take there and how good that is.
struct ScoredPlacement {
  std::vector<int> gpu_indices;  // ascending; empty for a CPU-only pod
  int64_t score = 0;             // higher is better; compared across nodes by IsBetter
};

// A node-choice policy: scores a pod's best placement on one node; the caller compares nodes
// with IsBetter and breaks ties by its own node order (a seed-random order in the openb replay,
// the node index in the scheduler). A node's score depends only on the node and the pod's shape
// (CPU, GPUs, models), so a caller may keep it until the node changes. Implementations are pure
// apart from the one that draws (it holds the caller's RNG). Owned by one replay or one
// scheduling cycle; not thread-safe.
class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;

  // "random", "dotprod", "clustering", "packing", "bestfit", "fgd" or "strata".
  virtual std::string_view name() const = 0;

  // The placement of `pod` on `node`. REQUIRES: Fits(node.free, pod).
  virtual ScoredPlacement Score(const PlacementNode& node, const GpuPodRequest& pod) = 0;

  // True when `a` (on one node) is preferable to `b` (on another). Default: the higher score.
  virtual bool IsBetter(const ScoredPlacement& a, const ScoredPlacement& b) const {
    return a.score > b.score;
  }

  // True when the policy keeps each pool of like nodes its reserve (pool_reserve.h) for the pods
  // that can run on few others: a caller that sees the whole cluster then offers a pod only the
  // nodes of pools that are not short, when it has any. Default: false (the artifact's baselines).
  virtual bool KeepsPoolReserve() const { return false; }

  // A policy that draws a node instead of scoring them (Random) returns the position of its
  // choice among `feasible_count` feasible nodes (REQUIRES: > 0); the caller then asks Score
  // for that node alone, which draws its GPUs. Default: nullopt, choose by score.
  virtual std::optional<size_t> DrawNode(size_t /*feasible_count*/) { return std::nullopt; }
};

// Every policy name MakePlacementPolicy accepts, the artifact's baselines first in its order,
// then "strata".
std::vector<std::string_view> PlacementPolicyNames();

// The policy called `name`, scoring against `mix` (FGD and strata; the mix must outlive the
// policy) and drawing from `rng` (Random; it must outlive the policy). InvalidArgument listing
// the valid names otherwise.
Result<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(std::string_view name,
                                                             const WorkloadMix* mix,
                                                             PlacementRng* rng);

// Shared GPU choices.

// The milli-GPU free on the node, summed over its GPUs.
int64_t GpuMilliLeft(const GpuNodeFree& node);

// The first `count` GPUs, by index, with at least `milli` free. REQUIRES: that many exist.
std::vector<int> LowestIndexedFitting(const GpuNodeFree& node, int32_t count, int32_t milli);

// The baselines' GPU choice: a fraction takes the GPU with the least remaining that still fits
// (lowest index on a tie); whole GPUs take the lowest-indexed free ones; CPU-only takes none.
// REQUIRES: Fits(node, pod).
std::vector<int> TightestFitGpus(const GpuNodeFree& node, const GpuPodRequest& pod);

}  // namespace strata::scheduler
