#include "scheduler/fragmentation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

namespace strata::scheduler {
namespace {

// Increases closer than this (milli-GPU) are equal: they differ only by rounding.
constexpr double kIncreaseEpsilon = 1e-9;

// PlacementScore = kMaxPlacementScore * sigmoid(-increase / kPlacementScoreScaleMilli), FGD's
// squashing with a narrower scale than FGD's 1000: with the CPU-aware measure, 700 placed a
// little more on most openb variants, one setting for all; continuous scores (no bands) placed
// less everywhere (bench/openb/RESULTS.md).
constexpr double kMaxPlacementScore = 100;
constexpr double kPlacementScoreScaleMilli = 700;

bool ModelAllowed(const std::vector<std::string>& allowed, const std::string& model) {
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), model) != allowed.end();
}

// True when a node of `gpu_model` with `gpu_count` GPUs could never hold a pod of GPU shape
// `shape`, even empty: another model, or more GPUs than the node has.
bool NeverHolds(const GpuPodRequest& shape, const std::string& gpu_model, size_t gpu_count) {
  return shape.gpu_count > 0 && (!ModelAllowed(shape.allowed_gpu_models, gpu_model) ||
                                 static_cast<size_t>(shape.gpu_count) > gpu_count);
}

int CountGpusWithAtLeast(const std::vector<int32_t>& gpu_milli, int32_t milli) {
  return static_cast<int>(std::count_if(gpu_milli.begin(), gpu_milli.end(),
                                        [milli](int32_t free) { return free >= milli; }));
}

// The node's free GPU milli in ascending order with prefix sums, so that each shape of a mix is
// answered by one binary search instead of a pass over the GPUs.
class SortedGpuFree {
 public:
  explicit SortedGpuFree(const std::vector<int32_t>& gpu_milli) : sorted_(gpu_milli) {
    std::sort(sorted_.begin(), sorted_.end());
    prefix_.resize(sorted_.size() + 1, 0);
    for (size_t i = 0; i < sorted_.size(); ++i) prefix_[i + 1] = prefix_[i] + sorted_[i];
  }

  int64_t Total() const { return prefix_.back(); }
  size_t Count() const { return sorted_.size(); }
  // Number of GPUs with at least `milli` free.
  int CountAtLeast(int32_t milli) const {
    return static_cast<int>(sorted_.end() - LowerBound(milli));
  }
  // Free milli summed over every GPU except the `n` with the most free.
  // REQUIRES: 0 <= n <= number of GPUs.
  int64_t SumExceptLargest(int n) const { return prefix_[sorted_.size() - n]; }

 private:
  std::vector<int32_t>::const_iterator LowerBound(int32_t milli) const {
    return std::lower_bound(sorted_.begin(), sorted_.end(), milli);
  }

  std::vector<int32_t> sorted_;
  std::vector<int64_t> prefix_;
};

// The mix's mean CPU per milli-GPU over its GPU shapes: what a typical pod asks of a node's CPU
// for each milli-GPU it takes. 0 when the mix has no GPU shape.
double MeanCpuPerGpuMilli(const WorkloadMix& mix) {
  double cpu = 0;
  double gpu_milli = 0;
  for (const WeightedPodShape& weighted : mix.shapes) {
    if (weighted.shape.gpu_count == 0) continue;
    cpu += weighted.weight * static_cast<double>(weighted.shape.cpu_milli);
    gpu_milli += weighted.weight * static_cast<double>(weighted.shape.TotalGpuMilli());
  }
  return gpu_milli > 0 ? cpu / gpu_milli : 0;
}

// How many of the node's GPUs pods of `shape` could still use. kSinglePod (FGD): if one pod fits,
// every GPU with room for it. kCpuAware: pods one after another, GPUs with room shared out by the
// shape's GPU count, and no more pods than the free CPU serves at the mix's mean CPU per GPU
// (at least the one pod that fits now).
int64_t GpusUsable(const GpuPodRequest& shape, int64_t cpu_milli, const SortedGpuFree& gpus,
                   FragmentationModel model, double cpu_per_gpu_milli) {
  const int fitting = gpus.CountAtLeast(shape.gpu_milli_each);
  if (cpu_milli < shape.cpu_milli || fitting < shape.gpu_count) return 0;
  if (model == FragmentationModel::kSinglePod) return fitting;
  int64_t pods = fitting / shape.gpu_count;
  const double cpu_per_pod = cpu_per_gpu_milli * static_cast<double>(shape.TotalGpuMilli());
  if (cpu_per_pod > 0) {
    pods = std::min(pods, std::max<int64_t>(1, static_cast<int64_t>(cpu_milli / cpu_per_pod)));
  }
  return pods * shape.gpu_count;
}

double FragmentationOf(const std::string& gpu_model, int64_t cpu_milli, const SortedGpuFree& gpus,
                       const WorkloadMix& mix, FragmentationModel model) {
  const double cpu_per_gpu_milli = MeanCpuPerGpuMilli(mix);
  double expected = 0;
  for (const WeightedPodShape& weighted : mix.shapes) {
    const GpuPodRequest& shape = weighted.shape;
    // A shape that cannot use the node's GPUs leaves them all idle (FGD). One that can uses the
    // fullest GPUs with room for it and the rest stays idle; CPU-aware, only as many as the
    // node's free CPU can feed, so GPUs behind exhausted CPU count as fragmented. CPU-aware, a
    // shape the node could never hold is no part of its fragmentation: its pods go elsewhere.
    const bool never_holds = NeverHolds(shape, gpu_model, gpus.Count());
    if (never_holds && model == FragmentationModel::kCpuAware) continue;
    const int64_t used = shape.gpu_count > 0 && !never_holds
                             ? GpusUsable(shape, cpu_milli, gpus, model, cpu_per_gpu_milli)
                             : 0;
    expected +=
        weighted.weight * static_cast<double>(gpus.SumExceptLargest(static_cast<int>(used)));
  }
  return expected;
}

double FragmentationAfter(const GpuNodeFree& node, const GpuPodRequest& pod,
                          const std::vector<int>& gpu_indices, const WorkloadMix& mix) {
  std::vector<int32_t> gpu_milli = node.gpu_milli;
  for (int index : gpu_indices) gpu_milli[index] -= pod.gpu_milli_each;
  return FragmentationOf(node.gpu_model, node.cpu_milli - pod.cpu_milli, SortedGpuFree(gpu_milli),
                         mix, FragmentationModel::kCpuAware);
}

}  // namespace

double NeverHeldWeight(const WorkloadMix& mix, const GpuNodeFree& node) {
  double weight = 0;
  for (const WeightedPodShape& weighted : mix.shapes) {
    if (NeverHolds(weighted.shape, node.gpu_model, node.gpu_milli.size())) {
      weight += weighted.weight;
    }
  }
  return weight;
}

WorkloadMix EstimateWorkloadMix(std::span<const GpuPodRequest> observed,
                                const WorkloadMixOptions& options) {
  using ShapeKey = std::tuple<int64_t, int32_t, int32_t, std::vector<std::string>>;
  std::map<ShapeKey, int64_t> counts;
  for (const GpuPodRequest& pod : observed) {
    ++counts[ShapeKey(pod.cpu_milli, pod.gpu_milli_each, pod.gpu_count, pod.allowed_gpu_models)];
  }
  std::vector<std::pair<ShapeKey, int64_t>> ranked(counts.begin(), counts.end());
  // Most frequent first; on a tie, larger CPU, then larger milli, then more GPUs: reversing the
  // key order of the map gives exactly that.
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });

  WorkloadMix mix;
  const double total = static_cast<double>(observed.size());
  int64_t covered = 0;
  for (const auto& [key, count] : ranked) {
    if (!mix.shapes.empty() && static_cast<double>(covered) >= options.coverage * total) break;
    GpuPodRequest shape;
    std::tie(shape.cpu_milli, shape.gpu_milli_each, shape.gpu_count, shape.allowed_gpu_models) =
        key;
    mix.shapes.push_back({std::move(shape), static_cast<double>(count)});
    covered += count;
  }
  for (WeightedPodShape& weighted : mix.shapes) weighted.weight /= static_cast<double>(covered);
  return mix;
}

bool Fits(const GpuNodeFree& node, const GpuPodRequest& pod) {
  if (node.cpu_milli < pod.cpu_milli || node.memory_mib < pod.memory_mib) return false;
  if (pod.gpu_count == 0) return true;
  return ModelAllowed(pod.allowed_gpu_models, node.gpu_model) &&
         CountGpusWithAtLeast(node.gpu_milli, pod.gpu_milli_each) >= pod.gpu_count;
}

double ExpectedFragmentation(const GpuNodeFree& node, const WorkloadMix& mix,
                             FragmentationModel model) {
  return FragmentationOf(node.gpu_model, node.cpu_milli, SortedGpuFree(node.gpu_milli), mix, model);
}

std::optional<GpuPlacement> PlanPlacement(const GpuNodeFree& node, const GpuPodRequest& pod,
                                          const WorkloadMix& mix) {
  if (!Fits(node, pod)) return std::nullopt;
  const double before = ExpectedFragmentation(node, mix);
  const int64_t gpu_milli_left_after =
      std::accumulate(node.gpu_milli.begin(), node.gpu_milli.end(), int64_t{0}) -
      pod.TotalGpuMilli();

  // Candidate GPU sets: a fraction may go on any GPU it fits (equal free capacity gives an equal
  // outcome, so one GPU per distinct free value is tried); whole or multi-GPU requests take the
  // fullest GPUs they fit on, which for whole GPUs is the lowest-indexed free ones.
  std::vector<int> fitting;
  for (int i = 0; i < static_cast<int>(node.gpu_milli.size()); ++i) {
    if (node.gpu_milli[i] >= pod.gpu_milli_each) fitting.push_back(i);
  }
  std::stable_sort(fitting.begin(), fitting.end(),
                   [&](int a, int b) { return node.gpu_milli[a] < node.gpu_milli[b]; });
  std::vector<std::vector<int>> candidates;
  if (pod.IsFractional()) {
    for (size_t i = 0; i < fitting.size(); ++i) {
      if (i == 0 || node.gpu_milli[fitting[i]] != node.gpu_milli[fitting[i - 1]]) {
        candidates.push_back({fitting[i]});
      }
    }
  } else {
    std::vector<int> taken(fitting.begin(), fitting.begin() + pod.gpu_count);
    std::sort(taken.begin(), taken.end());
    candidates.push_back(std::move(taken));
  }

  std::optional<GpuPlacement> best;
  for (std::vector<int>& gpu_indices : candidates) {
    const double increase = FragmentationAfter(node, pod, gpu_indices, mix) - before;
    // Candidates come fullest GPU first, so keeping the first of equals prefers the fullest.
    if (!best || increase < best->fragmentation_increase - kIncreaseEpsilon) {
      best = GpuPlacement{std::move(gpu_indices), increase, gpu_milli_left_after};
    }
  }
  return best;
}

int PlacementScore(const GpuPlacement& placement) {
  return static_cast<int>(kMaxPlacementScore / (1 + std::exp(placement.fragmentation_increase /
                                                             kPlacementScoreScaleMilli)));
}

bool IsBetterPlacement(const GpuPlacement& a, const GpuPlacement& b) {
  return PlacementScore(a) > PlacementScore(b);
}

}  // namespace strata::scheduler
