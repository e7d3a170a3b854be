#include "scheduler/fgd_placement.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/check.h"
#include "scheduler/baseline_scales.h"

namespace strata::scheduler {

int64_t FgdScoreOfDecrease(double decrease_milli) {
  return static_cast<int64_t>(kBaselineMaxScore / (1 + std::exp(-decrease_milli / 1000)));
}

ScoredPlacement FgdPlacement::Score(const PlacementNode& placement_node, const GpuPodRequest& pod) {
  constexpr auto kFgdModel = FragmentationModel::kSinglePod;
  const GpuNodeFree& node = placement_node.free;
  const double before = ExpectedFragmentation(node, mix_, kFgdModel);
  const auto score_after = [&](const std::vector<int>& gpus) {
    GpuNodeFree after = node;
    after.cpu_milli -= pod.cpu_milli;
    for (int index : gpus) after.gpu_milli[index] -= pod.gpu_milli_each;
    return FgdScoreOfDecrease(before - ExpectedFragmentation(after, mix_, kFgdModel));
  };
  if (!pod.IsFractional()) {
    std::vector<int> gpus = pod.gpu_count == 0
                                ? std::vector<int>()
                                : LowestIndexedFitting(node, pod.gpu_count, pod.gpu_milli_each);
    const int64_t score = score_after(gpus);
    return {std::move(gpus), score};
  }
  int64_t best_score = -1;
  int best_gpu = -1;
  // GPUs with equal free capacity score equally: score each free value once.
  std::vector<std::pair<int32_t, int64_t>> scored_values;
  for (int i = 0; i < static_cast<int>(node.gpu_milli.size()); ++i) {
    const int32_t left = node.gpu_milli[i];
    if (left < pod.gpu_milli_each) continue;
    const auto seen = std::find_if(scored_values.begin(), scored_values.end(),
                                   [left](const auto& scored) { return scored.first == left; });
    const int64_t score = seen != scored_values.end() ? seen->second : score_after({i});
    if (seen == scored_values.end()) scored_values.emplace_back(left, score);
    if (score > best_score) {
      best_score = score;
      best_gpu = i;
    }
  }
  STRATA_CHECK(best_gpu >= 0);
  return {{best_gpu}, best_score};
}

}  // namespace strata::scheduler
