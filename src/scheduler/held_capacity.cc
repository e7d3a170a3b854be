#include "scheduler/held_capacity.h"

namespace strata::scheduler {
namespace {

const Flavor* FlavorOf(const CapacityIndex& index, int flavor) {
  return flavor < 0 ? nullptr : &index.cluster().flavors[flavor];
}

}  // namespace

void HoldRunning(const RunningWorkload& running, CapacityIndex& index, QuotaLedger& ledger) {
  for (const PodPlacement& pod : running.pods) {
    index.Allocate(running.workload.pod_sets[pod.pod_set], pod);
  }
  const int queue = ledger.QueueIndex(running.workload.queue);
  if (queue >= 0 && running.flavor >= 0) {
    ledger.Add(queue, running.flavor,
               QuotaLedger::ChargeFor(running.workload, FlavorOf(index, running.flavor)));
  }
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
    : cluster_(std::move(cluster)), index_(*cluster_), ledger_(*cluster_) {}

}  // namespace strata::scheduler
