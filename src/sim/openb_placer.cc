#include "sim/openb_placer.h"

#include <utility>

#include "common/check.h"

namespace strata::sim {

OpenbPlacer::OpenbPlacer(std::unique_ptr<scheduler::PlacementPolicy> policy,
                         std::vector<uint32_t> node_rank, int shape_count,
                         scheduler::PoolReserve reserve)
    : policy_(std::move(policy)),
      node_rank_(std::move(node_rank)),
      shape_count_(shape_count),
      reserve_(std::move(reserve)),
      cache_(node_rank_.size() * static_cast<size_t>(shape_count)) {}

std::optional<OpenbChoice> OpenbPlacer::Choose(const std::vector<OpenbSimNode>& nodes,
                                               const OpenbSimPod& pod) {
  STRATA_CHECK(nodes.size() == node_rank_.size());
  STRATA_CHECK(pod.shape_id >= 0 && pod.shape_id < shape_count_);
  feasible_.clear();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (scheduler::Fits(nodes[i].node.free, pod.request)) feasible_.push_back(i);
  }
  if (feasible_.empty()) return std::nullopt;
  if (policy_->KeepsPoolReserve()) KeepReserve(nodes, pod);
  if (const std::optional<size_t> drawn = policy_->DrawNode(feasible_.size())) {
    const size_t node = feasible_[*drawn];
    return OpenbChoice{node, policy_->Score(nodes[node].node, pod.request).gpu_indices};
  }
  std::optional<size_t> best_node;
  const CachedScore* best = nullptr;
  for (size_t i : feasible_) {
    const CachedScore& score = Score(nodes[i], i, pod);
    bool better = best == nullptr;
    if (!better) {
      const bool strictly_better = policy_->IsBetter(score.placement, best->placement);
      better = strictly_better || (!policy_->IsBetter(best->placement, score.placement) &&
                                   node_rank_[i] < node_rank_[*best_node]);
    }
    if (better) {
      best_node = i;
      best = &score;
    }
  }
  return OpenbChoice{*best_node, best->placement.gpu_indices};
}

void OpenbPlacer::KeepReserve(const std::vector<OpenbSimNode>& nodes, const OpenbSimPod& pod) {
  if (pod.request.gpu_count == 0) return;
  pool_free_.assign(reserve_.pool_count(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    pool_free_[reserve_.PoolOf(i)] += scheduler::GpuMilliLeft(nodes[i].node.free);
  }
  feasible_ = reserve_.KeepCovered(pod.request, feasible_, pool_free_);
}

const OpenbPlacer::CachedScore& OpenbPlacer::Score(const OpenbSimNode& node, size_t node_index,
                                                   const OpenbSimPod& pod) {
  CachedScore& cached = cache_[node_index * static_cast<size_t>(shape_count_) + pod.shape_id];
  if (cached.version != node.version) {
    cached.placement = policy_->Score(node.node, pod.request);
    cached.version = node.version;
  }
  return cached;
}

}  // namespace strata::sim
