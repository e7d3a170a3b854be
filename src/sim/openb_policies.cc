#include "sim/openb_policies.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "common/check.h"
#include "fmt/format.h"

namespace strata::sim {
namespace {

using scheduler::GpuNodeFree;
using scheduler::GpuPlacement;
using scheduler::GpuPodRequest;
using scheduler::kMilliGpuPerGpu;

// The artifact normalises CPU and GPU by the largest node it was written for.
constexpr double kCpuScale = 128000;
constexpr double kGpuScale = 8000;
constexpr int64_t kMaxScore = 100;

constexpr std::pair<OpenbPolicy, std::string_view> kPolicyNames[] = {
    {OpenbPolicy::kRandom, "random"},         {OpenbPolicy::kDotProd, "dotprod"},
    {OpenbPolicy::kClustering, "clustering"}, {OpenbPolicy::kPacking, "packing"},
    {OpenbPolicy::kBestFit, "bestfit"},       {OpenbPolicy::kFgd, "fgd"},
    {OpenbPolicy::kStrata, "strata"},
};

int64_t GpuMilliLeft(const GpuNodeFree& node) {
  return std::accumulate(node.gpu_milli.begin(), node.gpu_milli.end(), int64_t{0});
}

// The first `count` GPUs, by index, with at least `milli` free. REQUIRES: that many exist.
std::vector<int> LowestIndexedFitting(const GpuNodeFree& node, int32_t count, int32_t milli) {
  std::vector<int> taken;
  for (int i = 0; i < static_cast<int>(node.gpu_milli.size()) && count > 0; ++i) {
    if (node.gpu_milli[i] >= milli) {
      taken.push_back(i);
      --count;
    }
  }
  STRATA_CHECK(count == 0);
  return taken;
}

// The baselines' GPU choice: a fraction takes the GPU with the least remaining that still fits
// (lowest index on a tie); whole GPUs take the lowest-indexed free ones.
std::vector<int> BestFitGpus(const GpuNodeFree& node, const GpuPodRequest& pod) {
  if (pod.gpu_count == 0) return {};
  if (!pod.IsFractional()) return LowestIndexedFitting(node, pod.gpu_count, pod.gpu_milli_each);
  int best = -1;
  for (int i = 0; i < static_cast<int>(node.gpu_milli.size()); ++i) {
    if (node.gpu_milli[i] >= pod.gpu_milli_each &&
        (best < 0 || node.gpu_milli[i] < node.gpu_milli[best])) {
      best = i;
    }
  }
  STRATA_CHECK(best >= 0);
  return {best};
}

int64_t DotProductScore(const GpuNodeFree& node, const GpuPodRequest& pod) {
  const double dot =
      (static_cast<double>(node.cpu_milli) / kCpuScale) * (pod.cpu_milli / kCpuScale) +
      (static_cast<double>(GpuMilliLeft(node)) / kGpuScale) * (pod.TotalGpuMilli() / kGpuScale);
  return static_cast<int64_t>(kMaxScore * (1 - dot / 2));
}

int32_t ClusteringTag(const GpuPodRequest& pod) {
  return pod.IsFractional() ? kShareTag : pod.gpu_count;
}

int64_t ClusteringScore(const OpenbSimNode& node, const GpuPodRequest& pod) {
  if (pod.gpu_count == 0) return 0;
  const int64_t base =
      static_cast<int64_t>(std::floor(25 * (kGpuScale - GpuMilliLeft(node.free)) / kGpuScale));
  const int32_t tag = ClusteringTag(pod);
  if (node.gpu_pod_tags.empty()) return base + 25;
  if (!node.gpu_pod_tags.contains(tag)) return base;
  return base + (node.gpu_pod_tags.size() == 1 ? 75 : 50);
}

int64_t PackingScore(const GpuNodeFree& node, const GpuPodRequest& pod) {
  if (pod.TotalGpuMilli() <= 0) return 0;
  const int64_t fully_free =
      std::count(node.gpu_milli.begin(), node.gpu_milli.end(), kMilliGpuPerGpu);
  if (fully_free == static_cast<int64_t>(node.gpu_milli.size())) {
    return std::max(kMaxScore / 3 - fully_free, fully_free);
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
  if (free_taken > 0) return std::max(kMaxScore / 2 - free_taken, kMaxScore / 3);
  return std::max(kMaxScore - left_percent / 10, kMaxScore / 2);
}

int64_t BestFitScore(const GpuNodeFree& node, const GpuPodRequest& pod) {
  const double slack =
      0.5 * static_cast<double>(node.cpu_milli - pod.cpu_milli) / kCpuScale +
      0.5 * static_cast<double>(GpuMilliLeft(node) - pod.TotalGpuMilli()) / kGpuScale;
  return static_cast<int64_t>(kMaxScore * (1 - slack));
}

// The artifact's FGD: the fragmentation decrease squashed to an integer score, with a fraction
// trying every GPU it fits on (lowest index among equal scores).
std::pair<int64_t, std::vector<int>> FgdScore(const GpuNodeFree& node, const GpuPodRequest& pod,
                                              const scheduler::WorkloadMix& mix) {
  constexpr auto kFgdModel = scheduler::FragmentationModel::kSinglePod;
  const double before = scheduler::ExpectedFragmentation(node, mix, kFgdModel);
  const auto score_after = [&](const std::vector<int>& gpus) {
    GpuNodeFree after = node;
    after.cpu_milli -= pod.cpu_milli;
    for (int index : gpus) after.gpu_milli[index] -= pod.gpu_milli_each;
    const double decrease = before - scheduler::ExpectedFragmentation(after, mix, kFgdModel);
    return static_cast<int64_t>(kMaxScore / (1 + std::exp(-decrease / 1000)));
  };
  if (!pod.IsFractional()) {
    std::vector<int> gpus = pod.gpu_count == 0
                                ? std::vector<int>()
                                : LowestIndexedFitting(node, pod.gpu_count, pod.gpu_milli_each);
    return {score_after(gpus), std::move(gpus)};
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
  return {best_score, {best_gpu}};
}

}  // namespace

std::vector<OpenbPolicy> AllOpenbPolicies() {
  std::vector<OpenbPolicy> policies;
  for (const auto& [policy, name] : kPolicyNames) policies.push_back(policy);
  return policies;
}

std::string_view OpenbPolicyName(OpenbPolicy policy) {
  for (const auto& [candidate, name] : kPolicyNames) {
    if (candidate == policy) return name;
  }
  STRATA_CHECK(false);
  return {};
}

Result<OpenbPolicy> ParseOpenbPolicy(std::string_view name) {
  std::string valid;
  for (const auto& [policy, candidate] : kPolicyNames) {
    if (candidate == name) return policy;
    valid += valid.empty() ? "" : ", ";
    valid += candidate;
  }
  return Err(
      InvalidArgumentError(fmt::format("unknown policy '{}': expected one of {}", name, valid)));
}

uint64_t DrawBelow(OpenbRng& rng, uint64_t n) {
  STRATA_CHECK(n > 0);
  // Rejection keeps the draw exactly uniform; at most one retry in expectation.
  const uint64_t limit = OpenbRng::max() - (OpenbRng::max() % n + 1) % n;
  uint64_t draw = rng();
  while (draw > limit) draw = rng();
  return draw % n;
}

OpenbPlacer::OpenbPlacer(OpenbPolicy policy, scheduler::WorkloadMix mix,
                         std::vector<uint32_t> node_rank, int shape_count, OpenbRng* rng)
    : policy_(policy),
      mix_(std::move(mix)),
      node_rank_(std::move(node_rank)),
      shape_count_(shape_count),
      rng_(rng),
      cache_(node_rank_.size() * static_cast<size_t>(shape_count)) {}

std::optional<OpenbChoice> OpenbPlacer::Choose(const std::vector<OpenbSimNode>& nodes,
                                               const OpenbSimPod& pod) {
  STRATA_CHECK(nodes.size() == node_rank_.size());
  STRATA_CHECK(pod.shape_id >= 0 && pod.shape_id < shape_count_);
  if (policy_ == OpenbPolicy::kRandom) return ChooseRandom(nodes, pod);
  std::optional<size_t> best_node;
  const CachedScore* best = nullptr;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!scheduler::Fits(nodes[i].free, pod.request)) continue;
    const CachedScore& score = Score(nodes[i], i, pod);
    bool better = best == nullptr;
    if (!better) {
      const bool strictly_better = IsBetter(score, *best);
      better =
          strictly_better || (!IsBetter(*best, score) && node_rank_[i] < node_rank_[*best_node]);
    }
    if (better) {
      best_node = i;
      best = &score;
    }
  }
  if (!best_node) return std::nullopt;
  return OpenbChoice{*best_node, best->placement.gpu_indices};
}

bool OpenbPlacer::IsBetter(const CachedScore& a, const CachedScore& b) const {
  if (policy_ == OpenbPolicy::kStrata)
    return scheduler::IsBetterPlacement(a.placement, b.placement);
  return a.score > b.score;
}

std::optional<OpenbChoice> OpenbPlacer::ChooseRandom(const std::vector<OpenbSimNode>& nodes,
                                                     const OpenbSimPod& pod) {
  std::vector<size_t> feasible;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (scheduler::Fits(nodes[i].free, pod.request)) feasible.push_back(i);
  }
  if (feasible.empty()) return std::nullopt;
  const size_t node = feasible[DrawBelow(*rng_, feasible.size())];
  const GpuNodeFree& free = nodes[node].free;
  const GpuPodRequest& request = pod.request;
  if (!request.IsFractional()) {
    return OpenbChoice{node, request.gpu_count == 0 ? std::vector<int>()
                                                    : LowestIndexedFitting(free, request.gpu_count,
                                                                           request.gpu_milli_each)};
  }
  std::vector<int> fitting;
  for (int i = 0; i < static_cast<int>(free.gpu_milli.size()); ++i) {
    if (free.gpu_milli[i] >= request.gpu_milli_each) fitting.push_back(i);
  }
  return OpenbChoice{node, {fitting[DrawBelow(*rng_, fitting.size())]}};
}

const OpenbPlacer::CachedScore& OpenbPlacer::Score(const OpenbSimNode& node, size_t node_index,
                                                   const OpenbSimPod& pod) {
  CachedScore& cached = cache_[node_index * static_cast<size_t>(shape_count_) + pod.shape_id];
  if (cached.version != node.version) {
    cached = ComputeScore(node, pod.request);
    cached.version = node.version;
  }
  return cached;
}

OpenbPlacer::CachedScore OpenbPlacer::ComputeScore(const OpenbSimNode& node,
                                                   const GpuPodRequest& pod) const {
  CachedScore result;
  switch (policy_) {
    case OpenbPolicy::kStrata: {
      std::optional<GpuPlacement> placement = scheduler::PlanPlacement(node.free, pod, mix_);
      STRATA_CHECK(placement.has_value());
      result.placement = std::move(*placement);
      return result;
    }
    case OpenbPolicy::kFgd: {
      auto [score, gpus] = FgdScore(node.free, pod, mix_);
      result.score = score;
      result.placement.gpu_indices = std::move(gpus);
      return result;
    }
    case OpenbPolicy::kDotProd:
      result.score = DotProductScore(node.free, pod);
      break;
    case OpenbPolicy::kClustering:
      result.score = ClusteringScore(node, pod);
      break;
    case OpenbPolicy::kPacking:
      result.score = PackingScore(node.free, pod);
      break;
    case OpenbPolicy::kBestFit:
      result.score = BestFitScore(node.free, pod);
      break;
    case OpenbPolicy::kRandom:
      STRATA_CHECK(false);
  }
  result.placement.gpu_indices = BestFitGpus(node.free, pod);
  return result;
}

}  // namespace strata::sim
