#include "scheduler/cycle_state.h"

#include <algorithm>

#include "common/check.h"
#include "scheduler/held_capacity.h"
#include "scheduler/pool_demand.h"

namespace strata::scheduler {
namespace {

// The mix of pod shapes that fragmentation is measured against: what waits and what runs. Only
// built when some pending pod asks for a share, the one case that consults it.
WorkloadMix ObservedMix(const Snapshot& snapshot, const std::vector<Workload>& pending) {
  bool any_share = false;
  for (const Workload& w : pending) {
    for (const PodSet& ps : w.pod_sets) any_share = any_share || ps.gpu.IsShare();
  }
  if (!any_share) return {};
  std::vector<GpuPodRequest> observed;
  auto add = [&](const Workload& w) {
    for (const PodSet& ps : w.pod_sets) {
      if (ps.gpu.IsMig()) continue;
      for (int i = 0; i < ps.count; ++i) observed.push_back(ShapeOf(ps));
    }
  };
  for (const Workload& w : pending) add(w);
  for (const RunningWorkload& r : snapshot.running) add(r.workload);
  return EstimateWorkloadMix(observed);
}

// The pool reserve for the demand of what waits and what runs, as the openb replay's for its
// trace. Inactive where `policy` keeps none, or where fewer than two pools have GPUs (one pool
// holds everything any pool can). The held capacity, when there is one, keeps the running
// workloads' demand between cycles, so a cycle adds only what waits.
PoolReserve ObservedReserve(const Snapshot& snapshot, const std::vector<Workload>& pending,
                            const CapacityIndex& index, const PlacementPolicy& policy) {
  if (!policy.KeepsPoolReserve() || index.pools()->gpu_pool_count() < 2) {
    return PoolReserve(PoolDemand(index.pools()));
  }
  PoolDemand demand =
      snapshot.held != nullptr ? snapshot.held->running_demand() : PoolDemand(index.pools());
  if (snapshot.held == nullptr) {
    for (const RunningWorkload& r : snapshot.running) AddWorkloadDemand(r.workload, 1, &demand);
  }
  for (const Workload& w : pending) AddWorkloadDemand(w, 1, &demand);
  return PoolReserve(demand);
}

std::unique_ptr<PlacementPolicy> SharePolicy(const SchedulerOptions& options,
                                             const WorkloadMix* mix, PlacementRng* rng) {
  Result<std::unique_ptr<PlacementPolicy>> policy =
      MakePlacementPolicy(options.share_placement, mix, rng);
  STRATA_CHECK(policy.has_value());
  return std::move(*policy);
}

CapacityIndex StartingIndex(const Snapshot& snapshot) {
  if (snapshot.held == nullptr) return CapacityIndex(*snapshot.cluster);
  STRATA_CHECK(snapshot.held->cluster() == snapshot.cluster);
  CapacityIndex index = snapshot.held->index();
  index.SortNodeSets();
  return index;
}

QuotaLedger StartingLedger(const Snapshot& snapshot) {
  if (snapshot.held == nullptr) return QuotaLedger(*snapshot.cluster);
  return snapshot.held->ledger();
}

}  // namespace

CycleState::CycleState(const Snapshot& snapshot, const std::vector<Workload>& pending,
                       const SchedulerOptions& options)
    : snapshot(snapshot),
      cluster(*snapshot.cluster),
      options(options),
      index(StartingIndex(snapshot)),
      ledger(StartingLedger(snapshot)),
      mix(ObservedMix(snapshot, pending)),
      rng(options.seed),
      share_policy(SharePolicy(options, &mix, &rng)),
      reserve(ObservedReserve(snapshot, pending, index, *share_policy)),
      placer(index, *share_policy, &reserve) {
  running.reserve(snapshot.running.size());
  running_queue.reserve(snapshot.running.size());
  for (const RunningWorkload& r : snapshot.running) {
    // One that does not fit (bound by hand to GPUs taken or absent) holds nothing, and is no
    // preemption candidate.
    if (snapshot.held == nullptr && !HoldRunning(r, index, ledger)) continue;
    running.push_back(&r);
    running_queue.push_back(ledger.QueueIndex(r.workload.queue));
  }
  preemptible = running.size();
  victim.assign(running.size(), false);
}

void CycleState::AddBound(const Workload& workload, int flavor, std::vector<PodPlacement> pods) {
  bound.push_back({workload, flavor, std::move(pods), snapshot.now, snapshot.now, 0});
  running.push_back(&bound.back());
  running_queue.push_back(ledger.QueueIndex(workload.queue));
  victim.push_back(false);
}

std::vector<int> CycleState::FlavorsOf(int queue) const {
  if (queue < 0 || cluster.queues[queue].flavors.empty()) return {-1};
  std::vector<int> flavors;
  for (const FlavorQuota& fq : cluster.queues[queue].flavors) flavors.push_back(fq.flavor);
  return flavors;
}

void CycleState::Hold(const RunningWorkload& running) {
  // What it held before, freed for a trial, fits again.
  STRATA_CHECK(HoldRunning(running, index, ledger));
}

void CycleState::Free(const RunningWorkload& running) { FreeRunning(running, index, ledger); }

double GpusHeld(const RunningWorkload& running) {
  double gpus = 0;
  for (const PodPlacement& pod : running.pods) {
    const GpuRequest& request = running.workload.pod_sets[pod.pod_set].gpu;
    if (request.IsWhole()) {
      gpus += request.count;
    } else if (request.IsShare()) {
      gpus += request.milli / 1000.0;
    } else if (request.IsMig()) {
      gpus += 1.0 / 7;
    }
  }
  return gpus;
}

}  // namespace strata::scheduler
