#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sim/openb_placer.h"
#include "sim/openb_trace.h"

namespace strata::sim {

// Placement quality on the openb trace, replayed the way the FGD artifact does: pods are
// sampled with replacement until the arrived GPU request reaches 130 % of the cluster's GPU
// capacity, shuffled, placed one at a time under one policy, and never leave; the GPU allocation
// ratio is recorded against the arrived load. Deterministic for a seed. Pure functions;
// thread-safe.

// The arrived GPU request the replay stops at, in % of the cluster's GPU capacity.
inline constexpr int kOpenbTargetLoadPct = 130;

// Below this arrived load (in % of GPU capacity) a good policy should fail no pod: the replay lists
// the pods it failed there, so that two policies can be compared pod by pod.
inline constexpr int kOpenbEarlyLoadPct = 90;

// The artifact's allocation curve of one run: after every placement attempt, the arrived load
// x = round-half-even(arrived / capacity * 100) and the allocation y = used / capacity * 100
// (to 2 decimals) are recorded; the value at a load column is the mean y over attempts with that
// x, else over attempts within one column of it. Not thread-safe; owned by one replay.
class OpenbAllocationCurve {
 public:
  // REQUIRES: capacity_milli is a positive multiple of 100.
  explicit OpenbAllocationCurve(int64_t capacity_milli);

  // Records one attempt: the milli-GPU arrived so far and the milli-GPU allocated now.
  void Record(int64_t arrived_milli, int64_t used_milli);

  // The mean allocation (% of capacity) at `load_pct`, or nullopt when no attempt was near it.
  std::optional<double> AllocPctAt(int load_pct) const;

 private:
  int64_t milli_per_pct_;
  std::vector<double> sum_;     // by load column
  std::vector<int64_t> count_;  // by load column
};

// The arrival order of one run, as indices into `pods`: every pod once, shuffled, then copies
// drawn uniformly with replacement while the arrived GPU request stays within `target_milli`
// (the draw that would overshoot by its per-GPU request stops the sampling, as the artifact does).
std::vector<size_t> OpenbArrivals(const std::vector<OpenbPod>& pods, int64_t target_milli,
                                  OpenbRng& rng);

// The outcome of one seed.
struct OpenbSeedRun {
  uint64_t seed = 0;
  int64_t pods_arrived = 0;
  int64_t pods_placed = 0;
  // Positions in the arrival order (0-based) of the pods that no node took while the arrived
  // load, that pod included, was below kOpenbEarlyLoadPct. The arrival order depends on the seed
  // only, so the same position is the same pod under every policy.
  std::vector<int64_t> failed_early;
  OpenbAllocationCurve curve{100};
};

// Replays `pods` on `nodes` under the placement policy named `policy`
// (scheduler::PlacementPolicyNames) with `seed`. InvalidArgument when the policy is unknown,
// the nodes have no GPU or there are no pods.
Result<OpenbSeedRun> ReplayOpenbSeed(const std::vector<OpenbNode>& nodes,
                                     const std::vector<OpenbPod>& pods, std::string_view policy,
                                     uint64_t seed);

// The mean over seeds of one policy's allocation at chosen loads.
struct OpenbSummary {
  std::string policy = "strata";
  std::vector<uint64_t> seeds;
  // (load %, mean allocation % over the seeds that have a value there, or nullopt if none).
  std::vector<std::pair<int, std::optional<double>>> alloc_pct;
  // OpenbSeedRun::failed_early of each seed, in the order of `seeds`.
  std::vector<std::vector<int64_t>> failed_early;
};

// Replays every seed and averages the allocation at each of `loads_pct`. Errors as
// ReplayOpenbSeed; InvalidArgument when `seeds` is empty.
Result<OpenbSummary> ReplayOpenb(const std::vector<OpenbNode>& nodes,
                                 const std::vector<OpenbPod>& pods, std::string_view policy,
                                 const std::vector<uint64_t>& seeds,
                                 const std::vector<int>& loads_pct);

}  // namespace strata::sim
