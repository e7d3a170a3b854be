#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "api/queue.h"
#include "api/queue_usage.h"
#include "cluster/cache.h"
#include "common/quantity.h"

namespace strata::server {

// Label values of one series, in the order of the family's label names.
using SeriesLabels = std::vector<std::string>;
// The value of every series of one family, by label values.
using SeriesValues = std::map<SeriesLabels, double>;

// The cluster's state as /metrics reports it, counted over the cached objects.
struct ClusterTotals {
  // Objects by kind: every kind the API serves, zero included.
  std::map<std::string, int64_t> objects_by_kind;
  // Pods by status.phase; Pending, Running, Succeeded and Failed are always there.
  std::map<std::string, int64_t> pods_by_phase;
  // GPUs of registered nodes (status.gpus), and those assigned to pods (spec.assignedGpus) that
  // are not Succeeded or Failed.
  int64_t gpus_total = 0;
  int64_t gpus_held = 0;
};

// The cached objects' contributions to the cluster-state series, and their sums: Put an object
// as it is now, Remove it when it is gone, and every figure is the sum over what is held, so a
// change costs the one object, not a scan. Queue use is what each Queue's status says; which
// queue a pending workload names follows api::QueueNames, resolved when the series are read, so
// a queue created after its workloads still gets them.
//
// Rules: a pending workload is a Job in phase Pending, or a pod of no Job that is not bound to a
// node and is Pending; its reason is status.reason, "NotYetScheduled" when empty. Only the kinds
// the API serves count; others are ignored; an object that does not decode counts by its kind
// only.
//
// A plain value owned by ClusterMetrics; thread-compatible (the owner serialises calls).
class ClusterStateTable {
 public:
  ClusterStateTable();

  // Holds `object` as it is now, replacing what was held for its key.
  void Put(const cluster::CachedObject& object);
  // Forgets the object at `key`; nothing happens when none is held.
  void Remove(const store::ObjectKey& key);
  // Forgets every object.
  void Clear();

  // Whether the table counts objects of `kind` (the kinds the API serves).
  static bool Counts(const std::string& kind);

  ClusterTotals Totals() const;

  // Every queue's use (UsageByResource), by queue name.
  std::map<std::string, std::map<std::string, api::QueueResourceUsage>> QueueUsages() const;

  // Pending workloads by {queue, reason} (those whose queue resolves) and by {reason}.
  struct PendingCounts {
    SeriesValues by_queue;
    SeriesValues by_reason;
  };
  PendingCounts Pending() const;

 private:
  // A pending workload's {namespace, spec.queue, reason}.
  using PendingKey = std::tuple<std::string, std::string, std::string>;

  // One object's share of every sum.
  struct Contribution {
    std::string kind;
    std::string phase;  // pods only
    int64_t gpus_total = 0;
    int64_t gpus_held = 0;
    bool pending = false;
    PendingKey pending_key;
  };

  static Contribution ContributionOf(const cluster::CachedObject& object);
  // Adds `contribution` to the sums (sign +1) or takes it away (sign -1).
  void Account(const Contribution& contribution, int sign);

  std::map<store::ObjectKey, Contribution> contributions_;
  std::map<std::string, api::Queue> queues_;  // by name (queues are few)

  std::map<std::string, int64_t> objects_by_kind_;
  std::map<std::string, int64_t> pods_by_phase_;
  int64_t gpus_total_ = 0;
  int64_t gpus_held_ = 0;
  std::map<PendingKey, int64_t> pending_;
};

}  // namespace strata::server
