#include "scheduler/gpu_packing_placement.h"

#include <algorithm>
#include <numeric>

#include "scheduler/baseline_scales.h"

namespace strata::scheduler {
namespace {

int64_t PackingScore(const GpuNodeFree& node, const GpuPodRequest& pod) {
  if (pod.TotalGpuMilli() <= 0) return 0;
  const int64_t fully_free =
      std::count(node.gpu_milli.begin(), node.gpu_milli.end(), kMilliGpuPerGpu);
  if (fully_free == static_cast<int64_t>(node.gpu_milli.size())) {
    return std::max(kBaselineMaxScore / 3 - fully_free, fully_free);
  }
  std::vector<int> by_left(node.gpu_milli.size());
  std::iota(by_left.begin(), by_left.end(), 0);
  std::stable_sort(by_left.begin(), by_left.end(),
                   [&](int a, int b) { return node.gpu_milli[a] < node.gpu_milli[b]; });
  int32_t wanted = pod.gpu_count;
  int64_t free_taken = 0;
  int64_t left_percent = 0;
  for (int index : by_left) {
    if (wanted == 0) break;
    const int32_t left = node.gpu_milli[index];
    if (left < pod.gpu_milli_each) continue;
    --wanted;
    free_taken += left == kMilliGpuPerGpu ? 1 : 0;
    left_percent += left * 100 / kMilliGpuPerGpu;
  }
  if (free_taken > 0) return std::max(kBaselineMaxScore / 2 - free_taken, kBaselineMaxScore / 3);
  return std::max(kBaselineMaxScore - left_percent / 10, kBaselineMaxScore / 2);
}

}  // namespace

ScoredPlacement GpuPackingPlacement::Score(const PlacementNode& node, const GpuPodRequest& pod) {
  return {TightestFitGpus(node.free, pod), PackingScore(node.free, pod)};
}

}  // namespace strata::scheduler
