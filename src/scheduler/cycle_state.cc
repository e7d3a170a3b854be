#include "scheduler/cycle_state.h"

#include <algorithm>
#include <map>
#include <string>

#include "common/check.h"
#include "scheduler/held_capacity.h"

namespace strata::scheduler {
namespace {

GpuPodRequest ShapeOf(const PodSet& ps) {
  GpuPodRequest shape;
  shape.cpu_milli = ps.cpu_milli;
  shape.memory_mib = ps.memory_bytes >> 20;
  if (ps.gpu.IsWhole()) {
    shape.gpu_count = ps.gpu.count;
    shape.gpu_milli_each = kMilliGpuPerGpu;
  } else if (ps.gpu.IsShare() && ps.gpu.milli > 0) {
    shape.gpu_count = 1;
    shape.gpu_milli_each = static_cast<int32_t>(ps.gpu.milli);
  }
  return shape;
}

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

// What one pod of `ps` asks of a pool, for the reserve: ShapeOf with its GPU models, where GPUs
// of at least `min_memory_mib` count as the models that have that much (`model_memory`).
GpuPodRequest ReserveShapeOf(const PodSet& ps,
                             const std::map<std::string, int64_t, std::less<>>& model_memory) {
  GpuPodRequest shape = ShapeOf(ps);
  if (shape.gpu_count == 0) return shape;
  shape.allowed_gpu_models = ps.gpu.models;
  if (ps.gpu.min_memory_mib > 0) {
    if (shape.allowed_gpu_models.empty()) {
      for (const auto& [model, memory] : model_memory) shape.allowed_gpu_models.push_back(model);
    }
    std::erase_if(shape.allowed_gpu_models, [&](const std::string& model) {
      auto it = model_memory.find(model);
      return it == model_memory.end() || it->second < ps.gpu.min_memory_mib;
    });
    // No model has that much: the pod fits no pool, which the reserve leaves out as it is.
    if (shape.allowed_gpu_models.empty()) shape.allowed_gpu_models.push_back("");
  }
  return shape;
}

// The pool reserve for the demand of what waits and what runs, as the openb replay's for its
// trace. Inactive where `policy` keeps none, or where fewer than two pools have GPUs (one pool
// holds everything any pool can).
PoolReserve ObservedReserve(const Snapshot& snapshot, const std::vector<Workload>& pending,
                            const CapacityIndex& index, const PlacementPolicy& policy) {
  std::vector<CountedPodShape> observed;
  if (!policy.KeepsPoolReserve() || index.pools()->gpu_pool_count() < 2) {
    return PoolReserve(observed, index.pools());
  }
  std::map<std::string, int64_t, std::less<>> model_memory;  // filled at the first need
  auto add = [&](const Workload& w) {
    for (const PodSet& ps : w.pod_sets) {
      if (ps.gpu.min_memory_mib > 0 && model_memory.empty()) {
        for (const Node& node : snapshot.cluster->nodes) {
          for (const Gpu& gpu : node.gpus) {
            int64_t& memory = model_memory[gpu.model];
            memory = std::max(memory, gpu.memory_mib);
          }
        }
      }
      if (ps.gpu.IsWhole() || (ps.gpu.IsShare() && ps.gpu.milli > 0)) {
        observed.push_back({ReserveShapeOf(ps, model_memory), ps.count});
      }
    }
  };
  for (const Workload& w : pending) add(w);
  for (const RunningWorkload& r : snapshot.running) add(r.workload);
  return PoolReserve(observed, index.pools());
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
