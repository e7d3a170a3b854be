#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/quantity.h"
#include "server/queue_usage.h"
#include "store/object.h"

namespace strata::server {

// Label values of one series, in the order of the family's label names.
using SeriesLabels = std::vector<std::string>;
// The value of every series of one family, by label values.
using SeriesValues = std::map<SeriesLabels, double>;

// The cluster's state as /metrics reports it, counted over the stored objects.
struct ClusterTotals {
  // Objects by kind: every kind the API serves, zero included.
  std::map<std::string, int64_t> objects_by_kind;
  // Pods by status.phase ("Pending" when absent); Pending, Running, Succeeded and Failed are
  // always there, zero included.
  std::map<std::string, int64_t> pods_by_phase;
  // GPUs of registered nodes (status.gpus), and those assigned to pods (spec.assignedGpus) that
  // are not Succeeded or Failed.
  int64_t gpus_total = 0;
  int64_t gpus_held = 0;
};

// The stored objects' contributions to the cluster-state series, and their sums: Put an object
// as it is now, Remove it when it is gone, and every figure is the sum over what is held, so a
// change costs the one object, not a scan of the store. The figures equal what a scan of every
// object gives: each object's share is computed by the same rules (ComputeQueueUsage's for what a
// pod charges its queue, api::QueueNames's for which queue a workload names, resolved when the
// series are read, so a queue created after its pods still gets them).
//
// Rules, over the objects as the REST API serves them:
//   a pending workload is a Job in phase Pending (the default), or a pod of no Job that is not
//   bound to a node and is Pending; its reason is status.reason, "NotYetScheduled" when absent.
//   Only the kinds of AllResourceTypes() count; others are ignored.
//
// A plain value owned by ClusterMetrics; thread-compatible (the owner serialises calls).
class ClusterStateTable {
 public:
  ClusterStateTable();

  // Holds `object` as it is now, replacing what was held for its key.
  void Put(const store::Object& object);
  // Forgets the object at `key`; nothing happens when none is held.
  void Remove(const store::ObjectKey& key);
  // Forgets every object.
  void Clear();

  // Whether the table counts objects of `kind` (the kinds the API serves).
  static bool Counts(const std::string& kind);

  ClusterTotals Totals() const;

  // Every queue's use as ComputeQueueUsage gives it over the held queues and pods.
  std::vector<QueueUsage> QueueUsages() const;

  // Pending workloads by {queue, reason} (those whose queue resolves) and by {reason}.
  struct PendingCounts {
    SeriesValues by_queue;
    SeriesValues by_reason;
  };
  PendingCounts Pending() const;

 private:
  // Where a workload or a pod's charge goes before resolution: {namespace, spec.queue}.
  using QueueReference = std::pair<std::string, std::string>;
  // A pending workload's {namespace, spec.queue, reason}.
  using PendingKey = std::tuple<std::string, std::string, std::string>;
  // What the pods of one queue reference request, per resource: the sum, and how many pods
  // request it (ComputeQueueUsage lists a requested resource even at zero).
  struct ResourceCharge {
    Quantity sum;
    int64_t pods = 0;
  };

  // One object's share of every sum.
  struct Contribution {
    std::string kind;
    std::string phase;  // pods only
    int64_t gpus_total = 0;
    int64_t gpus_held = 0;
    bool pending = false;
    PendingKey pending_key;
    QueueReference charged_to;
    std::map<std::string, Quantity> charge;  // empty when the pod holds nothing
  };

  static Contribution ContributionOf(const store::Object& object);
  // Adds `contribution` to the sums (sign +1) or takes it away (sign -1).
  void Account(const Contribution& contribution, int sign);
  std::vector<nlohmann::json> QueueBodies() const;

  std::map<store::ObjectKey, Contribution> contributions_;
  std::map<std::string, nlohmann::json> queues_;  // Queue bodies by name (queues are few)

  std::map<std::string, int64_t> objects_by_kind_;
  std::map<std::string, int64_t> pods_by_phase_;
  int64_t gpus_total_ = 0;
  int64_t gpus_held_ = 0;
  std::map<PendingKey, int64_t> pending_;
  std::map<QueueReference, std::map<std::string, ResourceCharge>> charges_;
};

}  // namespace strata::server
