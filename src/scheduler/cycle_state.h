#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/capacity_index.h"
#include "scheduler/fragmentation.h"
#include "scheduler/gang_placer.h"
#include "scheduler/model.h"
#include "scheduler/placement_policy.h"
#include "scheduler/pool_reserve.h"
#include "scheduler/quota_ledger.h"
#include "scheduler/scheduler.h"

namespace strata::scheduler {

// Everything one scheduling cycle works on: the capacity index and quota ledger with the running
// workloads charged, the observed mix of pod shapes, the pool reserve for the observed demand
// (when the share policy keeps one), and which running workloads were already chosen as victims.
// Built by Scheduler::Cycle, used by it and by the preemption and reservation steps; not
// thread-safe. The snapshot must outlive it.
struct CycleState {
  CycleState(const Snapshot& snapshot, const std::vector<Workload>& pending,
             const SchedulerOptions& options);

  // The queue index of a workload (-1 for no queue) and the flavors it may use (-1: none).
  std::vector<int> FlavorsOf(int queue) const;
  const Flavor* FlavorPtr(int flavor) const {
    return flavor < 0 ? nullptr : &cluster.flavors[flavor];
  }
  // Takes or gives back a running workload's resources (capacity and quota).
  void Hold(const RunningWorkload& running);
  void Free(const RunningWorkload& running);
  // Records a workload bound in this cycle (its resources are already allocated).
  void AddBound(const Workload& workload, int flavor, std::vector<PodPlacement> pods);

  const Snapshot& snapshot;
  const Cluster& cluster;
  const SchedulerOptions& options;
  CapacityIndex index;
  QuotaLedger ledger;
  WorkloadMix mix;
  PlacementRng rng;  // for a share policy that draws
  std::unique_ptr<PlacementPolicy> share_policy;
  PoolReserve reserve;  // inactive unless the share policy keeps pool reserves
  GangPlacer placer;
  // The snapshot's running workloads, then those bound in this cycle (never victims).
  std::vector<const RunningWorkload*> running;
  std::deque<RunningWorkload> bound;  // those bound in this cycle
  size_t preemptible = 0;             // running[0, preemptible) may be victims
  std::vector<int> running_queue;     // queue index of each running workload
  std::vector<bool> victim;           // running workloads already chosen as victims
  std::optional<Reservation> reservation;
};

// The GPUs a workload holds, counting shares as fractions.
double GpusHeld(const RunningWorkload& running);

// Victims that let `workload` (queue `queue`, flavor `flavor`) fit whole, cheapest lost work
// first (GPUs x time since the last checkpoint), minimal (none can be spared), or empty when no
// such set exists. Only lower priority in the same queue, and workloads of cohort queues that
// borrow over nominal (when the preemptor's queue stays within its nominal quota), are
// candidates; a workload preempted options.max_preemptions_per_workload times is not.
std::vector<Preemption> FindVictims(CycleState& state, const Workload& workload, int queue,
                                    int flavor);

// The earliest start for `workload` as running workloads end at their runtime limits, and the
// nodes it would use then; nullopt if it cannot fit even on an empty cluster.
std::optional<Reservation> PlanReservation(CycleState& state, const Workload& workload, int flavor);

}  // namespace strata::scheduler
