#include "scheduler/scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <unordered_map>

#include "common/check.h"
#include "scheduler/capacity_ceiling.h"
#include "scheduler/cycle_state.h"
#include "scheduler/mig.h"
#include "scheduler/node_fit.h"
#include "scheduler/queue_order.h"

namespace strata::scheduler {
namespace {

// Workloads with the same key meet the same fate within a cycle once one has failed: capacity
// and quota only shrink during a cycle. Empty for workloads with node selectors, affinity or
// tolerations, which are not cached; GPU models are part of the key, so that a cycle with many
// pods waiting for a scarce model explains one failure per shape, not one per pod.
std::string FailureKey(const Workload& w, int queue, bool may_use_reserved) {
  std::string key = fmt::format("{}|{}|{}|{}|{}|", queue, w.priority, may_use_reserved,
                                static_cast<int>(w.topology.mode), w.topology.level);
  for (const PodSet& ps : w.pod_sets) {
    if (!ps.node_selector.empty() || !ps.affinity.empty() || !ps.tolerations.empty()) return "";
    key += fmt::format("{},{},{},{},{},{},{},{}", ps.count, ps.cpu_milli, ps.memory_bytes,
                       ps.gpu.count, ps.gpu.milli, ps.gpu.memory_mib, ps.gpu.mig_profile,
                       ps.gpu.min_memory_mib);
    for (const std::string& model : ps.gpu.models) (key += ',') += model;
    key += ';';
  }
  return key;
}

// The field a scheduler cannot honour, or "" if the workload is well formed.
std::string Invalid(const Workload& w, const CycleState& state, int queue) {
  if (!w.queue.empty() && queue < 0) return fmt::format("queue \"{}\" does not exist", w.queue);
  if (queue >= 0 && !state.cluster.queues[queue].admits_workloads) {
    return fmt::format(
        "queue \"{}\" holds cohort {}'s own quota, which the cohort's queues borrow; it admits no "
        "workload (name one of the cohort's queues)",
        w.queue, state.cluster.queues[queue].cohort);
  }
  if (w.topology.mode != TopologyMode::kNone && state.index.LevelOf(w.topology.level) < 0) {
    std::string levels;
    for (const std::string& l : state.cluster.topology_levels) levels += l + ", ";
    return fmt::format("topology.level: \"{}\" is not a topology level of the cluster ({}{})",
                       w.topology.level, levels, kHostLevel);
  }
  for (size_t i = 0; i < w.pod_sets.size(); ++i) {
    const PodSet& ps = w.pod_sets[i];
    if (ps.gpu.IsMig() && !IsKnownMigProfile(ps.gpu.mig_profile)) {
      return fmt::format("podSets[{}].gpu.mig: unknown MIG profile \"{}\"", i, ps.gpu.mig_profile);
    }
    if (ps.count < 1) return fmt::format("podSets[{}].count: must be at least 1", i);
  }
  return "";
}

class Cycle {
 public:
  Cycle(const Snapshot& snapshot, const std::vector<Workload>& pending,
        const SchedulerOptions& options, const QueueOrder& order)
      : state_(snapshot, pending, options), options_(options), order_(order) {}

  Decisions Run(const std::vector<Workload>& pending);

 private:
  struct QueueGroup {
    int queue = -1;
    std::string name;
    std::vector<const Workload*> workloads;
    size_t next = 0;
  };

  // Tries to bind `w`; records a Pending otherwise. Returns true if bound.
  bool Attempt(const Workload& w);
  void AddPending(const Workload& w, PendingTier tier, std::string message, std::string detail);
  // kube-scheduler's FitError for the first pod set of `w` that some node cannot host now, as
  // Kubernetes users read it (a workload that never fits is explained in those words too); ""
  // when every node could host one pod of each.
  std::string FitError(const Workload& w) const;

  CycleState state_;
  const SchedulerOptions& options_;
  const QueueOrder& order_;
  Decisions decisions_;
  std::unordered_map<std::string, Pending> failures_;
};

Decisions Cycle::Run(const std::vector<Workload>& pending) {
  std::vector<QueueGroup> groups;
  std::unordered_map<int, size_t> group_of;
  const CapacityCeiling ceiling(state_.cluster);
  for (const Workload& w : pending) {
    const int queue = state_.ledger.QueueIndex(w.queue);
    std::string invalid = Invalid(w, state_, queue);
    if (!invalid.empty()) {
      AddPending(w, PendingTier::kInvalid, "", std::move(invalid));
      continue;
    }
    // Left out of its queue: it would hold a reservation, or a StrictFIFO queue, forever.
    std::string never = ceiling.NeverFits(w);
    if (!never.empty()) {
      AddPending(w, PendingTier::kExceedsClusterCapacity, FitError(w), std::move(never));
      continue;
    }
    auto [it, inserted] = group_of.try_emplace(queue, groups.size());
    if (inserted) {
      groups.push_back({queue, queue < 0 ? "" : state_.cluster.queues[queue].name, {}, 0});
    }
    groups[it->second].workloads.push_back(&w);
  }
  for (QueueGroup& g : groups) {
    std::sort(g.workloads.begin(), g.workloads.end(),
              [this](const Workload* a, const Workload* b) { return order_.Before(*a, *b); });
  }
  // Queues by the order's rank, lowest first (fair-share: the dominant share, which changes only
  // when the queue admits); a queue is re-ranked when it goes back into the heap.
  using Entry = std::pair<QueueRank, size_t>;
  auto later = [&](const Entry& a, const Entry& b) {
    if (a.first != b.first) return a.first > b.first;
    return groups[a.second].name > groups[b.second].name;
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(later)> heap(later);
  auto rank = [&](const QueueGroup& g) {
    return order_.Rank(g.queue < 0 ? 0.0 : state_.ledger.DominantShare(g.queue),
                       *g.workloads[g.next]);
  };
  // Workloads that preempted in an earlier cycle go first: the victims' capacity is theirs.
  for (QueueGroup& g : groups) {
    std::stable_partition(g.workloads.begin(), g.workloads.end(),
                          [](const Workload* w) { return w->nominated; });
    while (g.next < g.workloads.size() && g.workloads[g.next]->nominated) {
      Attempt(*g.workloads[g.next++]);
    }
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].next < groups[i].workloads.size()) heap.push({rank(groups[i]), i});
  }
  while (!heap.empty()) {
    QueueGroup& g = groups[heap.top().second];
    const size_t id = heap.top().second;
    heap.pop();
    const Workload& w = *g.workloads[g.next++];
    const bool bound = Attempt(w);
    const bool strict =
        g.queue >= 0 && state_.cluster.queues[g.queue].strategy == QueueingStrategy::kStrictFifo;
    if (!bound && strict) {
      for (; g.next < g.workloads.size(); ++g.next) {
        AddPending(*g.workloads[g.next], PendingTier::kBlockedByStrictFifo, "",
                   fmt::format("StrictFIFO queue {}: waiting behind {}", g.name, w.name));
      }
    }
    if (g.next < g.workloads.size()) heap.push({rank(g), id});
  }
  return std::move(decisions_);
}

std::string Cycle::FitError(const Workload& w) const {
  for (const PodSet& pod_set : w.pod_sets) {
    FitErrorBuilder builder;
    bool unfit = false;
    for (int node = 0; node < state_.index.num_nodes(); ++node) {
      std::vector<std::string> reasons = UnfitReasons(state_.index, node, pod_set, FitContext{});
      unfit |= !reasons.empty();
      builder.AddNode(reasons);
    }
    if (unfit) return builder.Message();
  }
  return "";
}

void Cycle::AddPending(const Workload& w, PendingTier tier, std::string message,
                       std::string detail) {
  decisions_.pending.push_back({w.name, tier, std::move(message), std::move(detail)});
}

bool Cycle::Attempt(const Workload& w) {
  const Snapshot& snapshot = state_.snapshot;
  const int queue = state_.ledger.QueueIndex(w.queue);
  const std::optional<Reservation>& reservation = state_.reservation;
  // Slurm's backfill rule: a reserved node only for a workload that ends before the reservation
  // starts; a reservation waiting on a workload without a runtime limit has no start, so none.
  const bool may_use_reserved =
      !reservation || (w.runtime_limit && reservation->start &&
                       snapshot.now + *w.runtime_limit <= *reservation->start);
  const std::string key = FailureKey(w, queue, may_use_reserved);
  if (!key.empty()) {
    auto cached = failures_.find(key);
    if (cached != failures_.end()) {
      Pending p = cached->second;
      p.workload = w.name;
      decisions_.pending.push_back(std::move(p));
      return false;
    }
  }
  std::string quota_detail;
  std::optional<GangOutcome> failed;
  int failed_flavor = -1;
  for (int flavor : state_.FlavorsOf(queue)) {
    const ResourceVector charge = QuotaLedger::ChargeFor(w, state_.FlavorPtr(flavor));
    if (queue >= 0 && flavor >= 0 && !state_.ledger.Fits(queue, flavor, charge)) {
      if (quota_detail.empty()) quota_detail = state_.ledger.Explain(queue, flavor, charge);
      continue;
    }
    GangOutcome outcome = state_.placer.Place(
        w, FitContext{state_.FlavorPtr(flavor), may_use_reserved}, options_.explain);
    if (outcome.placed) {
      if (queue >= 0 && flavor >= 0) state_.ledger.Add(queue, flavor, charge);
      state_.AddBound(w, flavor, outcome.pods);
      decisions_.bindings.push_back({w.name, flavor, std::move(outcome.pods)});
      return true;
    }
    if (!failed) {
      failed = std::move(outcome);
      failed_flavor = flavor;
    }
  }
  for (int flavor : state_.FlavorsOf(queue)) {
    std::vector<Preemption> victims = FindVictims(state_, w, queue, flavor);
    if (victims.empty()) continue;
    std::string names;
    for (const Preemption& p : victims) names += (names.empty() ? "" : ", ") + p.victim;
    AddPending(w, PendingTier::kPreemptionPending, failed ? failed->message : "",
               fmt::format("preempting {} ({})", names, victims[0].reason));
    for (Preemption& p : victims) decisions_.preemptions.push_back(std::move(p));
    return false;
  }
  Pending result{w.name, PendingTier::kWaitingForQuota, "", quota_detail};
  if (failed) {
    result.message = failed->message;
    if (failed->topology_failed) {
      result.tier = PendingTier::kTopologyPlacementFailed;
    } else if (failed->pods_total > 1 && failed->pods_fitted > 0) {
      result.tier = PendingTier::kGangIncomplete;
      result.detail = fmt::format("{}/{} pods fit; the gang holds nothing while it waits",
                                  failed->pods_fitted, failed->pods_total);
    } else {
      result.tier = PendingTier::kUnschedulable;
      result.detail.clear();
    }
    if (!reservation) {
      std::optional<Reservation> planned = PlanReservation(state_, w, failed_flavor);
      if (planned) {
        state_.index.SetReserved(planned->nodes, true);
        Pending held = result;
        if (held.tier != PendingTier::kTopologyPlacementFailed) held.tier = PendingTier::kReserved;
        held.detail = planned->start
                          ? fmt::format("{} node(s) reserved from {}", planned->nodes.size(),
                                        FormatRfc3339(*planned->start))
                          : fmt::format(
                                "{} node(s) held for it until what runs there ends (no runtime "
                                "limit says when)",
                                planned->nodes.size());
        state_.reservation = planned;
        decisions_.reservation = std::move(planned);
        decisions_.pending.push_back(std::move(held));
        if (!key.empty()) failures_.emplace(key, std::move(result));
        return false;
      }
    }
  }
  if (!key.empty()) failures_.emplace(key, result);
  decisions_.pending.push_back(std::move(result));
  return false;
}

std::shared_ptr<const QueueOrder> MakeOrder(const SchedulerOptions& options) {
  Result<std::unique_ptr<QueueOrder>> order = MakeQueueOrder(options.queue_order, options.seed);
  STRATA_CHECK(order.has_value());
  // Checked here rather than at each cycle: the share policy is made per cycle.
  const WorkloadMix mix;
  PlacementRng rng;
  STRATA_CHECK(MakePlacementPolicy(options.share_placement, &mix, &rng).has_value());
  return std::shared_ptr<const QueueOrder>(std::move(*order));
}

}  // namespace

Scheduler::Scheduler(SchedulerOptions options)
    : options_(std::move(options)), order_(MakeOrder(options_)) {}

Decisions Scheduler::Cycle(const Snapshot& snapshot, const std::vector<Workload>& pending) const {
  scheduler::Cycle cycle(snapshot, pending, options_, *order_);
  return cycle.Run(pending);
}

}  // namespace strata::scheduler
