#include <algorithm>
#include <chrono>

#include "scheduler/cycle_state.h"

namespace strata::scheduler {
namespace {

struct Candidate {
  int running = 0;
  double cost = 0;  // GPU-seconds lost since the last checkpoint
  const char* reason = "";
};

// True if `workload` fits whole with what is free now (quota and capacity); leaves nothing
// allocated.
bool FitsNow(CycleState& state, const Workload& workload, int queue, int flavor) {
  const ResourceVector charge = QuotaLedger::ChargeFor(workload, state.FlavorPtr(flavor));
  if (queue >= 0 && flavor >= 0 && !state.ledger.Fits(queue, flavor, charge)) return false;
  FitContext context{state.FlavorPtr(flavor), true};
  GangOutcome outcome = state.placer.Place(workload, context, false);
  if (!outcome.placed) return false;
  state.placer.Unplace(workload, &outcome.pods);
  return true;
}

}  // namespace

std::vector<Preemption> FindVictims(CycleState& state, const Workload& workload, int queue,
                                    int flavor) {
  const Snapshot& snapshot = state.snapshot;
  const ResourceVector charge = QuotaLedger::ChargeFor(workload, state.FlavorPtr(flavor));
  const Queue* own_queue = queue >= 0 ? &state.cluster.queues[queue] : nullptr;
  // Reclaim is for a queue asking back what it lent: it must stay within its nominal quota.
  const bool may_reclaim = own_queue != nullptr && own_queue->reclaim_within_cohort &&
                           flavor >= 0 && state.ledger.CohortOf(queue) >= 0 &&
                           state.ledger.WithinNominal(queue, flavor, charge);
  const bool may_preempt_in_queue = own_queue == nullptr || own_queue->preempt_lower_priority;
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < state.preemptible; ++i) {
    const RunningWorkload& r = *state.running[i];
    if (state.victim[i] || r.times_preempted >= state.options.max_preemptions_per_workload) {
      continue;
    }
    const int r_queue = state.running_queue[i];
    const char* reason = nullptr;
    if (r_queue == queue && may_preempt_in_queue && r.workload.priority < workload.priority) {
      reason = "InQueuePriority";
    } else if (may_reclaim && r_queue >= 0 && r_queue != queue &&
               state.ledger.CohortOf(r_queue) == state.ledger.CohortOf(queue) &&
               state.ledger.IsBorrowing(r_queue, r.flavor)) {
      reason = "CohortReclaim";
    } else if (r.reclaimable && r.workload.priority <= workload.priority &&
               (r_queue == queue ||
                (r_queue >= 0 && queue >= 0 && state.ledger.CohortOf(queue) >= 0 &&
                 state.ledger.CohortOf(r_queue) == state.ledger.CohortOf(queue)))) {
      reason = "IdleReclaim";
    }
    if (reason == nullptr) continue;
    const TimePoint since = std::max(r.last_checkpoint, r.started);
    const double seconds =
        std::chrono::duration<double>(std::max(Duration::zero(), snapshot.now - since)).count();
    // Idle work is reclaimed first: it loses nothing anyone was using.
    const double cost = r.reclaimable ? 0.0 : GpusHeld(r) * seconds;
    candidates.push_back({static_cast<int>(i), cost, reason});
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](const Candidate& a, const Candidate& b) {
                     if (a.cost != b.cost) return a.cost < b.cost;
                     const Workload& wa = state.running[a.running]->workload;
                     const Workload& wb = state.running[b.running]->workload;
                     if (wa.priority != wb.priority) return wa.priority < wb.priority;
                     return wa.name < wb.name;
                   });
  // Take the cheapest until the workload fits, then give back every victim it can spare,
  // most expensive first.
  std::vector<Candidate> taken;
  bool fits = false;
  for (const Candidate& c : candidates) {
    state.Free(*state.running[c.running]);
    taken.push_back(c);
    if (FitsNow(state, workload, queue, flavor)) {
      fits = true;
      break;
    }
  }
  if (!fits) {
    for (const Candidate& c : taken) state.Hold(*state.running[c.running]);
    return {};
  }
  std::vector<Candidate> needed;
  for (auto it = taken.rbegin(); it != taken.rend(); ++it) {
    state.Hold(*state.running[it->running]);
    if (FitsNow(state, workload, queue, flavor)) continue;
    state.Free(*state.running[it->running]);
    needed.push_back(*it);
  }
  std::vector<Preemption> victims;
  for (const Candidate& c : needed) {
    // Victims keep their resources until they are evicted; nobody else may take them meanwhile.
    state.Hold(*state.running[c.running]);
    state.victim[c.running] = true;
    victims.push_back({state.running[c.running]->workload.name, workload.name, c.reason});
  }
  std::sort(victims.begin(), victims.end(),
            [](const Preemption& a, const Preemption& b) { return a.victim < b.victim; });
  return victims;
}

std::optional<Reservation> PlanReservation(CycleState& state, const Workload& workload,
                                           int flavor) {
  // Running workloads in the order they end; those without a runtime limit never do, so they
  // come last and a reservation that needs them has no start time.
  std::vector<int> order;
  for (size_t i = 0; i < state.running.size(); ++i) {
    if (!state.victim[i]) order.push_back(static_cast<int>(i));
  }
  auto end_of = [&](int i) -> std::optional<TimePoint> {
    const RunningWorkload& r = *state.running[i];
    if (!r.workload.runtime_limit) return std::nullopt;
    return r.started + *r.workload.runtime_limit;
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    auto ea = end_of(a);
    auto eb = end_of(b);
    if (ea.has_value() != eb.has_value()) return ea.has_value();
    return ea && *ea < *eb;
  });
  int64_t whole_gpus = 0;
  for (const PodSet& ps : workload.pod_sets) whole_gpus += int64_t{ps.gpu.count} * ps.count;
  FitContext context{state.FlavorPtr(flavor), true};
  std::optional<Reservation> reservation;
  std::vector<int> freed;
  for (int i : order) {
    state.Free(*state.running[i]);
    freed.push_back(i);
    if (state.index.domain(state.index.root()).free_whole_gpus < whole_gpus) continue;
    GangOutcome outcome = state.placer.Place(workload, context, false);
    if (!outcome.placed) continue;
    reservation = Reservation{workload.name, end_of(i), {}};
    for (const PodPlacement& pod : outcome.pods) reservation->nodes.push_back(pod.node);
    std::sort(reservation->nodes.begin(), reservation->nodes.end());
    reservation->nodes.erase(std::unique(reservation->nodes.begin(), reservation->nodes.end()),
                             reservation->nodes.end());
    state.placer.Unplace(workload, &outcome.pods);
    break;
  }
  for (auto it = freed.rbegin(); it != freed.rend(); ++it) state.Hold(*state.running[*it]);
  return reservation;
}

}  // namespace strata::scheduler
