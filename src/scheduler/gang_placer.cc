#include "scheduler/gang_placer.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "scheduler/pool_demand.h"

namespace strata::scheduler {
namespace {

// What one pod of `pod_set` asks for, for an explanation: "8 GPUs", "one 3g.40gb MIG instance".
std::string DescribeRequest(const PodSet& pod_set) {
  const GpuRequest& gpu = pod_set.gpu;
  if (gpu.IsWhole()) return fmt::format("{} GPU{}", gpu.count, gpu.count == 1 ? "" : "s");
  if (gpu.IsMig()) return fmt::format("one {} MIG instance", gpu.mig_profile);
  if (gpu.IsShare()) {
    return gpu.milli > 0 ? fmt::format("{}m of a GPU", gpu.milli)
                         : fmt::format("{}Mi of GPU memory", gpu.memory_mib);
  }
  return fmt::format("{}m CPU and {}Mi memory", pod_set.cpu_milli, pod_set.memory_bytes >> 20);
}

constexpr int kFeasibleSharedNodesToScore = 100;

int64_t WholeGpus(const Workload& workload) {
  int64_t total = 0;
  for (const PodSet& ps : workload.pod_sets) total += int64_t{ps.gpu.count} * ps.count;
  return total;
}

int TotalPods(const Workload& workload) {
  int total = 0;
  for (const PodSet& ps : workload.pod_sets) total += ps.count;
  return total;
}

// Pod sets with the largest pods first, so the big ones get the tight spots.
std::vector<int> PodSetOrder(const Workload& workload) {
  std::vector<int> order(workload.pod_sets.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return workload.pod_sets[a].gpu.count > workload.pod_sets[b].gpu.count;
  });
  return order;
}

}  // namespace

GangOutcome GangPlacer::Place(const Workload& workload, const FitContext& context, bool explain) {
  keep_reserve_ = reserve_ != nullptr && reserve_->Active();
  if (keep_reserve_) {
    GangOutcome outcome = PlaceGang(workload, context, false);
    keep_reserve_ = false;
    if (outcome.placed) return outcome;
  }
  return PlaceGang(workload, context, explain);
}

GangOutcome GangPlacer::PlaceGang(const Workload& workload, const FitContext& context,
                                  bool explain) {
  GangOutcome outcome;
  outcome.pods_total = TotalPods(workload);
  const int64_t whole_gpus = WholeGpus(workload);
  int level = 0;
  if (workload.topology.mode != TopologyMode::kNone)
    level = index_.LevelOf(workload.topology.level);
  const bool host_level = level == index_.num_levels();
  // Preferred: the requested level, then each wider one; required: only the requested level.
  // The whole cluster (level 0) comes last, below.
  const bool required = workload.topology.mode == TopologyMode::kRequired;
  const int widest = required ? level : 1;
  for (int l = level; l >= std::max(widest, 1); --l) {
    const bool hosts = l == index_.num_levels();
    for (int d : CandidateDomains(l, whole_gpus)) {
      int failed = -1;
      if (PlaceIn(workload, context, d, hosts, &outcome.pods, &failed)) {
        outcome.placed = true;
        return outcome;
      }
      Unplace(workload, &outcome.pods);
    }
  }
  // The whole cluster: a placement when no level is required; otherwise it tells a topology
  // failure from a shortage. Either way it explains the first pod that does not fit.
  int failed_pod_set = -1;
  if (PlaceIn(workload, context, index_.root(), false, &outcome.pods, &failed_pod_set)) {
    if (!required || level == 0) {
      outcome.placed = true;
      return outcome;
    }
    Unplace(workload, &outcome.pods);
    outcome.topology_failed = true;
    outcome.pods_fitted = outcome.pods_total;
    if (explain) {
      outcome.message = fmt::format("no {} domain has room for all {} pods of the gang",
                                    host_level ? std::string(kHostLevel) : workload.topology.level,
                                    outcome.pods_total);
    }
    return outcome;
  }
  outcome.pods_fitted = static_cast<int>(outcome.pods.size());
  if (explain) {
    outcome.message = Explain(workload.pod_sets[failed_pod_set], context, outcome.pods_fitted,
                              outcome.pods_total);
  }
  Unplace(workload, &outcome.pods);
  return outcome;
}

std::vector<int> GangPlacer::CandidateDomains(int level, int64_t whole_gpus) const {
  std::vector<int> candidates;
  if (level == index_.num_levels()) {
    // Host level: nodes with enough free whole GPUs, fewest first.
    const Domain& root = index_.domain(index_.root());
    const int first = static_cast<int>(std::min<int64_t>(whole_gpus, index_.max_gpus_per_node()));
    if (whole_gpus > index_.max_gpus_per_node()) return candidates;
    for (int k = first; k <= index_.max_gpus_per_node(); ++k) {
      std::vector<int> bucket = root.by_free_gpus[k].members();
      std::sort(bucket.begin(), bucket.end());
      candidates.insert(candidates.end(), bucket.begin(), bucket.end());
    }
    return candidates;
  }
  for (int d = 0; d < index_.num_domains(); ++d) {
    const Domain& domain = index_.domain(d);
    if (domain.level == level && domain.free_whole_gpus >= whole_gpus) candidates.push_back(d);
  }
  std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
    return index_.domain(a).free_whole_gpus < index_.domain(b).free_whole_gpus;
  });
  return candidates;
}

bool GangPlacer::PlaceIn(const Workload& workload, const FitContext& context, int domain,
                         bool host_level, std::vector<PodPlacement>* pods, int* failed_pod_set) {
  pods->clear();
  std::vector<int> gpus;
  for (int ps_index : PodSetOrder(workload)) {
    const PodSet& ps = workload.pod_sets[ps_index];
    for (int i = 0; i < ps.count; ++i) {
      const int node = PickNode(ps, context, domain, host_level, &gpus);
      if (node < 0) {
        // The caller explains the failure against this state, then rolls back.
        *failed_pod_set = ps_index;
        return false;
      }
      PodPlacement placement{ps_index, i, node, gpus};
      index_.Allocate(ps, placement);
      pods->push_back(std::move(placement));
    }
  }
  return true;
}

void GangPlacer::Unplace(const Workload& workload, std::vector<PodPlacement>* pods) {
  for (auto it = pods->rbegin(); it != pods->rend(); ++it) {
    index_.Release(workload.pod_sets[it->pod_set], *it);
  }
  pods->clear();
}

bool GangPlacer::Usable(int node, const PodSet& pod_set, const FitContext& context) const {
  if (index_.reserved(node) && !context.may_use_reserved) return false;
  return StaticFit(index_.cluster().nodes[node], pod_set, context);
}

double GangPlacer::ReserveRank(int node, const PodSet& pod_set) const {
  if (!keep_reserve_) return 1;
  // MIG instances and shares of GPU memory alone take no milli-GPU, so no reserve.
  const int64_t taken = ShapeOf(pod_set).TotalGpuMilli();
  if (taken == 0) return 1;
  const int pool = index_.PoolOf(node);
  return reserve_->CoverRank(pool, taken, index_.pool_free_milli()[pool], index_.free_milli());
}

double GangPlacer::BestPossibleRank(const PodSet& pod_set) const {
  if (!keep_reserve_) return 1;
  GpuPodRequest shape = ShapeOf(pod_set);
  if (shape.TotalGpuMilli() == 0) return 1;
  // Other filters (taints, selectors, GPU memory) only narrow the pools further: the rank found
  // is at least that of any feasible node, so stopping at it never passes over a better one.
  shape.allowed_gpu_models = pod_set.gpu.models;
  const NodePools& pools = *index_.pools();
  double best = 0;
  for (int pool = 0; pool < pools.pool_count(); ++pool) {
    if (!pools.HostsGpuPods(pool) || !Fits(pools.KindOf(pool), shape)) continue;
    best = std::max(best, reserve_->CoverRank(pool, shape.TotalGpuMilli(),
                                              index_.pool_free_milli()[pool], index_.free_milli()));
  }
  return best;
}

int GangPlacer::PickNode(const PodSet& pod_set, const FitContext& context, int domain,
                         bool host_level, std::vector<int>* gpus) {
  if (host_level) {
    const bool fits = Usable(domain, pod_set, context) && ChooseGpus(index_, domain, pod_set, gpus);
    return fits ? domain : -1;
  }
  const Domain& d = index_.domain(domain);
  if (pod_set.gpu.IsWhole()) return PickWholeNode(pod_set, context, d, gpus);
  if (pod_set.gpu.IsMig() || pod_set.gpu.IsShare()) {
    return PickSharedNode(pod_set, context, d, gpus);
  }
  return PickPlainNode(pod_set, context, d, gpus);
}

int GangPlacer::PickWholeNode(const PodSet& pod_set, const FitContext& context,
                              const Domain& domain, std::vector<int>* gpus) {
  // Best fit among the nodes of the best-ranked pools: the first node found in a pool of the best
  // rank possible wins at once; otherwise the first of the best rank seen in the whole walk.
  const double enough = BestPossibleRank(pod_set);
  int best = -1;
  double best_rank = -1;
  std::vector<int> best_gpus;
  for (int k = pod_set.gpu.count; k <= index_.max_gpus_per_node(); ++k) {
    for (int node : domain.by_free_gpus[k].members()) {
      if (!Usable(node, pod_set, context) || !ChooseGpus(index_, node, pod_set, gpus)) continue;
      const double rank = ReserveRank(node, pod_set);
      if (rank >= enough) return node;
      if (rank > best_rank) {
        best = node;
        best_rank = rank;
        best_gpus = *gpus;
      }
    }
  }
  if (best >= 0) *gpus = std::move(best_gpus);
  return best;
}

bool GangPlacer::ChooseByPolicy(int node, const PodSet& pod_set, ScoredPlacement* placement) const {
  const Node& spec = index_.cluster().nodes[node];
  PlacementNode candidate;
  GpuNodeFree& free = candidate.free;
  free.gpu_model = spec.gpus.empty() ? "" : spec.gpus[0].model;
  free.cpu_milli = index_.free_cpu(node);
  free.memory_mib = index_.free_memory(node) >> 20;
  const GpuRequest& request = pod_set.gpu;
  for (size_t i = 0; i < spec.gpus.size(); ++i) {
    const GpuFree& g = index_.gpu(node, static_cast<int>(i));
    const Gpu& gpu = spec.gpus[i];
    // GPUs this pod may not use count as full, so the scorer never picks them.
    const bool usable =
        !gpu.mig_enabled && g.memory_mib >= request.memory_mib &&
        gpu.memory_mib >= request.min_memory_mib &&
        (request.models.empty() || std::find(request.models.begin(), request.models.end(),
                                             gpu.model) != request.models.end());
    free.gpu_milli.push_back(usable ? g.milli : 0);
  }
  GpuPodRequest pod;
  pod.cpu_milli = pod_set.cpu_milli;
  pod.memory_mib = pod_set.memory_bytes >> 20;
  pod.gpu_count = 1;
  pod.gpu_milli_each = static_cast<int32_t>(request.milli);
  if (!Fits(free, pod)) return false;
  ScoredPlacement planned = share_policy_.Score(candidate, pod);
  if (planned.gpu_indices.size() != 1) return false;
  *placement = std::move(planned);
  return true;
}

int GangPlacer::PickSharedNode(const PodSet& pod_set, const FitContext& context,
                               const Domain& domain, std::vector<int>* gpus) {
  // Candidates: every node with a shared GPU that is not full, and one node per bucket of free
  // whole GPUs (nodes in one bucket outside the shared set look alike to a share, once they rank
  // alike to the reserve: a bucket offers its first node of each better rank until one has the
  // best rank possible).
  const double enough = BestPossibleRank(pod_set);
  std::vector<int> representatives;
  if (!pod_set.gpu.IsMig()) {
    for (int k = 1; k <= index_.max_gpus_per_node(); ++k) {
      double bucket_rank = -1;
      for (int node : domain.by_free_gpus[k].members()) {
        if (!Usable(node, pod_set, context) || !ChooseGpus(index_, node, pod_set, nullptr)) {
          continue;
        }
        const double rank = ReserveRank(node, pod_set);
        if (rank <= bucket_rank) continue;
        representatives.push_back(node);
        bucket_rank = rank;
        if (rank >= enough) break;
      }
    }
  }
  const std::vector<int>& shared = pod_set.gpu.IsMig() ? domain.mig_nodes : domain.shared.members();
  const bool use_policy = pod_set.gpu.IsShare() && pod_set.gpu.milli > 0;
  int best = -1;
  double best_rank = -1;  // the reserve's rank of the best node's pool: a higher one wins first
  ScoredPlacement best_placement;
  int64_t best_left = 0;
  std::vector<int> chosen;
  int feasible = 0;
  for (size_t i = 0; i < shared.size() + representatives.size(); ++i) {
    const int node = i < shared.size() ? shared[i] : representatives[i - shared.size()];
    // Like kube-scheduler's minFeasibleNodesToFind: score a bounded number of feasible nodes,
    // so a share costs the same on 100 nodes as on 10,000; but go on until one is found in a
    // pool of the best rank possible.
    if (feasible >= kFeasibleSharedNodesToScore && best_rank >= enough) break;
    if (!Usable(node, pod_set, context)) continue;
    if (use_policy) {
      ScoredPlacement placement;
      if (!ChooseByPolicy(node, pod_set, &placement)) continue;
      ++feasible;
      const double rank = ReserveRank(node, pod_set);
      if (rank < best_rank) continue;
      if (best < 0 || rank > best_rank || share_policy_.IsBetter(placement, best_placement) ||
          (!share_policy_.IsBetter(best_placement, placement) && node < best)) {
        best = node;
        best_rank = rank;
        best_placement = std::move(placement);
      }
      continue;
    }
    if (!ChooseGpus(index_, node, pod_set, &chosen)) continue;
    ++feasible;
    const double rank = ReserveRank(node, pod_set);
    if (rank < best_rank) continue;
    const GpuFree& g = index_.gpu(node, chosen[0]);
    const int64_t left = pod_set.gpu.IsMig() ? g.mig_compute : g.milli - pod_set.gpu.milli;
    if (best < 0 || rank > best_rank || left < best_left || (left == best_left && node < best)) {
      best = node;
      best_rank = rank;
      best_left = left;
      *gpus = chosen;
    }
  }
  if (best >= 0 && use_policy) *gpus = best_placement.gpu_indices;
  return best;
}

int GangPlacer::PickPlainNode(const PodSet& pod_set, const FitContext& context,
                              const Domain& domain, std::vector<int>* gpus) {
  // Pods without GPUs go to GPU-less nodes first, to keep GPUs reachable.
  for (bool gpu_nodes : {false, true}) {
    for (int node : domain.nodes) {
      if (index_.cluster().nodes[node].gpus.empty() == gpu_nodes) continue;
      if (Usable(node, pod_set, context) && ChooseGpus(index_, node, pod_set, gpus)) return node;
    }
  }
  return -1;
}

std::string GangPlacer::Explain(const PodSet& pod_set, const FitContext& context, int fitted,
                                int total) const {
  FitErrorBuilder builder;
  for (int node = 0; node < index_.num_nodes(); ++node) {
    builder.AddNode(UnfitReasons(index_, node, pod_set, context));
  }
  if (fitted == 0) return builder.Message();
  // The node counts are those left once the members that fit were placed: say so, and what
  // the gang still lacks, rather than let "6 Insufficient" read as no free node at all.
  return fmt::format(
      "{} The gang needs room for {} more pod(s) of {}.",
      builder.Message(fmt::format(" for pod {} of the gang's {} once {} {} placed", fitted + 1,
                                  total, fitted, fitted == 1 ? "is" : "are")),
      total - fitted, DescribeRequest(pod_set));
}

}  // namespace strata::scheduler
