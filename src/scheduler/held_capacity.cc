#include "scheduler/held_capacity.h"

namespace strata::scheduler {
namespace {

const Flavor* FlavorOf(const CapacityIndex& index, int flavor) {
  return flavor < 0 ? nullptr : &index.cluster().flavors[flavor];
}

}  // namespace

bool HoldRunning(const RunningWorkload& running, CapacityIndex& index, QuotaLedger& ledger) {
  for (size_t i = 0; i < running.pods.size(); ++i) {
    const PodPlacement& pod = running.pods[i];
    const bool valid_pod_set =
        pod.pod_set >= 0 && pod.pod_set < static_cast<int>(running.workload.pod_sets.size());
    if (!valid_pod_set || !index.CanAllocate(running.workload.pod_sets[pod.pod_set], pod)) {
      for (size_t j = i; j-- > 0;) {
        index.Release(running.workload.pod_sets[running.pods[j].pod_set], running.pods[j]);
      }
      return false;
    }
    index.Allocate(running.workload.pod_sets[pod.pod_set], pod);
  }
  const int queue = ledger.QueueIndex(running.workload.queue);
  if (queue >= 0 && running.flavor >= 0) {
    ledger.Add(queue, running.flavor,
               QuotaLedger::ChargeFor(running.workload, FlavorOf(index, running.flavor)));
  }
  return true;
}

void FreeRunning(const RunningWorkload& running, CapacityIndex& index, QuotaLedger& ledger) {
  for (auto it = running.pods.rbegin(); it != running.pods.rend(); ++it) {
    index.Release(running.workload.pod_sets[it->pod_set], *it);
  }
  const int queue = ledger.QueueIndex(running.workload.queue);
  if (queue >= 0 && running.flavor >= 0) {
    ledger.Subtract(queue, running.flavor,
                    QuotaLedger::ChargeFor(running.workload, FlavorOf(index, running.flavor)));
  }
}

HeldCapacity::HeldCapacity(std::shared_ptr<const Cluster> cluster)
    : cluster_(std::move(cluster)),
      index_(*cluster_),
      ledger_(*cluster_),
      running_demand_(index_.pools()) {}

bool HeldCapacity::Hold(const RunningWorkload& running) {
  if (!HoldRunning(running, index_, ledger_)) return false;
  AddWorkloadDemand(running.workload, 1, &running_demand_);
  return true;
}

void HeldCapacity::Free(const RunningWorkload& running) {
  FreeRunning(running, index_, ledger_);
  AddWorkloadDemand(running.workload, -1, &running_demand_);
}

}  // namespace strata::scheduler
