#include "scheduler/fragmentation_placement.h"

#include <cmath>
#include <utility>

#include "common/check.h"
#include "scheduler/fgd_placement.h"

namespace strata::scheduler {
namespace {

// The sigmoid scale (milli-GPU) of a fraction's score. FGD's own 1000: with the larger of the two
// measures, 700 lost more cells of the openb grid than it won (bench/openb/RESULTS.md).
constexpr double kShareScoreScaleMilli = 1000;
constexpr double kMaxScore = 100;
// Scores are combined lexicographically: primary * kTieBreakBase + secondary, secondary < base.
constexpr int64_t kTieBreakBase = 1000;

// FGD's (single-pod) increase on `node`, without the shapes the node could never hold: FGD counts
// every GPU taken on a node of a scarce model or a small node as a decrease for them, which drew
// pods that could run anywhere onto the nodes the constrained pods need (bench/openb/RESULTS.md).
double SinglePodIncrease(const GpuNodeFree& node, const GpuPodRequest& pod,
                         const std::vector<int>& gpu_indices, const WorkloadMix& mix) {
  constexpr auto kFgdModel = FragmentationModel::kSinglePod;
  GpuNodeFree after = node;
  after.cpu_milli -= pod.cpu_milli;
  for (int index : gpu_indices) after.gpu_milli[index] -= pod.gpu_milli_each;
  const double fgd_increase =
      ExpectedFragmentation(after, mix, kFgdModel) - ExpectedFragmentation(node, mix, kFgdModel);
  return fgd_increase + NeverHeldWeight(mix, node) * static_cast<double>(pod.TotalGpuMilli());
}

}  // namespace

ScoredPlacement FragmentationPlacement::Score(const PlacementNode& node, const GpuPodRequest& pod) {
  std::optional<GpuPlacement> planned = PlanPlacement(node.free, pod, mix_);
  STRATA_CHECK(planned.has_value());
  const double single_pod_increase = SinglePodIncrease(node.free, pod, planned->gpu_indices, mix_);
  // FGD's score of the same GPUs: the whole decision for whole GPUs and CPU-only pods, the
  // tie-break for fractions.
  const int64_t fgd_score = FgdScoreOfDecrease(-single_pod_increase);
  if (!pod.IsFractional()) {
    return {std::move(planned->gpu_indices), fgd_score * kTieBreakBase};
  }
  // A fraction is charged the larger of the two measures' increases, so a node that either
  // measure sees fragmenting (GPUs stranded behind CPU, or a shape that no longer fits) scores low.
  const double increase = std::max(planned->fragmentation_increase, single_pod_increase);
  const auto share_score =
      static_cast<int64_t>(kMaxScore / (1 + std::exp(increase / kShareScoreScaleMilli)));
  return {std::move(planned->gpu_indices), share_score * kTieBreakBase + fgd_score};
}

}  // namespace strata::scheduler
