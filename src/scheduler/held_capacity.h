#pragma once

#include <memory>

#include "scheduler/capacity_index.h"
#include "scheduler/model.h"
#include "scheduler/pool_demand.h"
#include "scheduler/quota_ledger.h"

namespace strata::scheduler {

// Takes (Hold) or gives back (Free) what a running workload holds: the capacity its pods'
// placements name and its charge to its queue's quota in its flavor. HoldRunning takes nothing
// and returns false when a pod's placement does not fit what is left
// (CapacityIndex::CanAllocate: a pod bound by hand to GPUs that are taken or not there).
[[nodiscard]] bool HoldRunning(const RunningWorkload& running, CapacityIndex& index,
                               QuotaLedger& ledger);
void FreeRunning(const RunningWorkload& running, CapacityIndex& index, QuotaLedger& ledger);

// A cluster's capacity index, quota ledger and pool demand with a set of running workloads held,
// kept by a caller that keeps its running workloads between cycles (kube-scheduler's scheduler
// cache), so that a cycle starts from a copy of it (Snapshot::held) instead of holding every
// running workload again: a cycle then costs the size of the cluster's nodes, not of what runs on
// them. Not thread-safe.
class HeldCapacity {
 public:
  // Nothing held on `cluster`.
  explicit HeldCapacity(std::shared_ptr<const Cluster> cluster);

  HeldCapacity(const HeldCapacity&) = delete;
  HeldCapacity& operator=(const HeldCapacity&) = delete;

  // False, holding nothing, when `running` does not fit (HoldRunning).
  [[nodiscard]] bool Hold(const RunningWorkload& running);
  // REQUIRES: `running` is held.
  void Free(const RunningWorkload& running);

  const std::shared_ptr<const Cluster>& cluster() const { return cluster_; }
  const CapacityIndex& index() const { return index_; }
  const QuotaLedger& ledger() const { return ledger_; }
  // The GPU demand of the held workloads' pods, for the pool reserve (AddWorkloadDemand).
  const PoolDemand& running_demand() const { return running_demand_; }

 private:
  std::shared_ptr<const Cluster> cluster_;
  CapacityIndex index_;
  QuotaLedger ledger_;
  PoolDemand running_demand_;
};

}  // namespace strata::scheduler
