#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "telemetry/metrics.h"
#include "telemetry/stats.h"

namespace strata::server {

#define STRATA_QUEUE_STATS(COUNTER, GAUGE, HISTOGRAM)                                              \
  GAUGE(nominal_quota, "Nominal quota, summed over the queue's flavors (GPUs, cores, bytes).",     \
        "queue", "resource")                                                                       \
  GAUGE(usage, "What the queue's bound, live pods request (GPUs, cores, bytes).", "queue",         \
        "resource")                                                                                \
  GAUGE(borrowed, "Usage above the nominal quota, borrowed from the cohort.", "queue", "resource") \
  GAUGE(pending_workloads, "Workloads of the queue waiting, by the scheduler's reason tier.",      \
        "queue", "reason")
STRATA_DECLARE_STATS(QueueStats, STRATA_QUEUE_STATS);

#define STRATA_PENDING_STATS(COUNTER, GAUGE, HISTOGRAM) \
  GAUGE(pending_workloads, "Workloads waiting, by the scheduler's reason tier.", "reason")
STRATA_DECLARE_STATS(PendingStats, STRATA_PENDING_STATS);

#define STRATA_POD_STATS(COUNTER, GAUGE, HISTOGRAM) \
  GAUGE(by_phase, "Pods by phase (Pending, Running, Succeeded, Failed).", "phase")
STRATA_DECLARE_STATS(PodStats, STRATA_POD_STATS);

// The cluster-state series of /metrics, computed from the store's objects at each scrape:
//   strata_queue_nominal_quota / _usage / _borrowed {queue, resource}  (ComputeQueueUsage)
//   strata_queue_pending_workloads {queue, reason}
//   strata_scheduler_pending_workloads {reason}
//   strata_pods_by_phase {phase}
// A pending workload is a Job in phase Pending, or a pod of no Job (standalone, or a Service
// replica's) that is not bound to a node; its reason is the tier the scheduler stored in
// status.reason ("WaitingForQuota", "TopologyPlacementFailed", ...), "NotYetScheduled" before the
// scheduler looked at it. Series of queues and reasons that are gone are dropped or set to zero.
//
// Owned by the RestApi; `registry` must outlive it. Update is called by one scrape at a time
// (not thread-safe itself; the families are).
class ClusterMetrics {
 public:
  explicit ClusterMetrics(telemetry::Registry& registry);

  // Recomputes every series from the objects as the REST API serves them.
  void Update(const std::vector<nlohmann::json>& queues, const std::vector<nlohmann::json>& jobs,
              const std::vector<nlohmann::json>& pods);

 private:
  QueueStats queues_;
  PendingStats scheduler_;
  PodStats pods_;
};

}  // namespace strata::server
