#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace strata::scheduler {

// Fragmentation-aware GPU placement (the FGD idea, "Beware of Fragmentation", ATC'23): a node's
// fragmentation is the idle GPU capacity that the expected mix of pod shapes could not use, and
// a pod goes where it raises that expectation least. Everything here is a pure function over
// plain values: no allocation outlives a call, no state, safe to call from any thread.

// Milli-GPUs in one GPU.
inline constexpr int32_t kMilliGpuPerGpu = 1000;

// The free capacity of one node, as the scorer sees it.
struct GpuNodeFree {
  std::string gpu_model;           // e.g. "V100M32"; one model per node
  int64_t cpu_milli = 0;           // free CPU
  int64_t memory_mib = 0;          // free memory
  std::vector<int32_t> gpu_milli;  // free milli-GPU of each GPU, by index, each 0..1000
};

// What one pod asks for. A pod takes `gpu_count` GPUs with `gpu_milli_each` of each: whole GPUs
// are gpu_milli_each == 1000 (any count), a fraction is gpu_count == 1 with 1..999, and a
// CPU-only pod has gpu_count == 0. GPU memory is part of the fraction, so a GPU is never
// promised beyond its capacity.
struct GpuPodRequest {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t gpu_count = 0;
  int32_t gpu_milli_each = 0;
  std::vector<std::string> allowed_gpu_models;  // empty: any model

  // The total milli-GPU requested: gpu_count * gpu_milli_each.
  int64_t TotalGpuMilli() const { return int64_t{gpu_count} * gpu_milli_each; }
  // True for a fraction of one GPU (a shareable request).
  bool IsFractional() const { return gpu_count == 1 && gpu_milli_each < kMilliGpuPerGpu; }
};

// One pod shape of the expected workload and how often it arrives (weights need not sum to 1).
struct WeightedPodShape {
  GpuPodRequest shape;  // memory_mib is ignored: fragmentation is about GPUs
  double weight = 0;
};

// The expected mix of pod shapes. Build it with EstimateWorkloadMix from pods seen so far.
struct WorkloadMix {
  std::vector<WeightedPodShape> shapes;  // weights sum to 1 once estimated; empty: no opinion
};

// How EstimateWorkloadMix counts what it observes.
struct WorkloadMixOptions {
  // Keep the most frequent shapes until they cover at least this share of the observed pods.
  double coverage = 0.95;
};

// The workload mix of `observed` pods: shapes are (CPU, GPU count, milli per GPU, allowed
// models); each pod counts once; the most frequent shapes are kept until `coverage` is reached
// (ties: more CPU, more milli, more GPUs first) and the weights are renormalised to sum to 1.
// Returns an empty mix when nothing was observed.
WorkloadMix EstimateWorkloadMix(std::span<const GpuPodRequest> observed,
                                const WorkloadMixOptions& options = {});

// True when `node` can host `pod` now: GPU model allowed, CPU and memory enough, and enough GPUs
// with gpu_milli_each free on each. Memory and GPUs are never overcommitted.
bool Fits(const GpuNodeFree& node, const GpuPodRequest& pod);

// The expected idle milli-GPU on `node` that pods drawn from `mix` could not use (FGD's F(n),
// made CPU-aware). A GPU shape the node could never hold, even empty (model not allowed, more
// GPUs than the node has), counts nothing: its pods go to other nodes, so the node's idle GPUs
// are not fragments to it. For each other shape: if one pod of it cannot fit now (too little
// CPU, too few GPUs with room, or a CPU-only shape), all idle capacity is fragmented. Otherwise
// the node could host k pods of it one after another: GPUs with room shared out by its GPU count,
// and no more than the free CPU feeds at the mix's mean CPU per GPU (at least 1); those take the
// k x gpu_count GPUs with the most free capacity and the rest of the idle capacity is fragmented.
// Weighted by the shapes' weights. FGD's measure counts every GPU with room as usable as soon as
// one pod fits, so GPUs stranded behind exhausted CPU look usable to it.
//
// `model` kSinglePod gives FGD's original measure, kept for the FGD baseline: there a shape the
// node could never hold makes all its idle capacity fragmented, so any GPU taken on a node that
// many shapes cannot use (a scarce model, a small node) lowers the measure, which draws pods to
// such nodes; see NeverHeldWeight.
enum class FragmentationModel { kCpuAware, kSinglePod };
double ExpectedFragmentation(const GpuNodeFree& node, const WorkloadMix& mix,
                             FragmentationModel model = FragmentationModel::kCpuAware);

// The weight of the shapes of `mix` that `node` could never hold, even empty (GPU shapes of
// another model or with more GPUs than the node has). Under kSinglePod these shapes lower the
// node's measure by exactly NeverHeldWeight x the milli-GPU any pod takes there.
double NeverHeldWeight(const WorkloadMix& mix, const GpuNodeFree& node);

// Where a pod would go on one node, and what it would cost.
struct GpuPlacement {
  std::vector<int> gpu_indices;  // the GPUs taken, ascending; empty for a CPU-only pod
  // ExpectedFragmentation after minus before, in milli-GPU: lower is better, may be negative.
  double fragmentation_increase = 0;
  // Free milli-GPU left on the node after placing.
  int64_t gpu_milli_left_after = 0;
};

// The best placement of `pod` on `node` for `mix`: the GPUs that raise fragmentation least
// (a fraction tries every GPU it fits on, preferring the fullest on a tie, then the lowest index;
// whole GPUs take free GPUs from the lowest index). Returns nullopt when !Fits(node, pod).
std::optional<GpuPlacement> PlanPlacement(const GpuNodeFree& node, const GpuPodRequest& pod,
                                          const WorkloadMix& mix);

// The placement's score, 0..100, higher is better: the fragmentation increase squashed by a
// sigmoid and truncated, 100 * sigmoid(-increase / 700). Increases that differ by a few tens of
// milli-GPU share a score: on the openb trace, spreading such near-equal choices by the caller's
// node order places more than following their fine differences (see bench/openb/RESULTS.md).
int PlacementScore(const GpuPlacement& placement);

// True when placement `a` (on one node) is preferable to `b` (on another): a higher
// PlacementScore. Placements with equal scores are neither better; the caller breaks that tie
// by its node order (a seed-random order in simulation).
bool IsBetterPlacement(const GpuPlacement& a, const GpuPlacement& b);

}  // namespace strata::scheduler
