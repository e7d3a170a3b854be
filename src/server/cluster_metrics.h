#pragma once

#include <cstddef>
#include <memory>
#include <mutex>

#include "cluster/cache.h"
#include "common/status.h"
#include "metrics/metrics.h"
#include "metrics/stats.h"
#include "server/cluster_state.h"

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

#define STRATA_STORE_STATE_STATS(COUNTER, GAUGE, HISTOGRAM)                                     \
  GAUGE(objects, "Objects in the store, by kind.", "kind")                                      \
  GAUGE(pods, "Pods by phase.", "phase")                                                        \
  GAUGE(gpus, "GPUs of registered nodes, by whether a pod holds them.", "state")                \
  GAUGE(state_lists,                                                                            \
        "Lists of the store behind the control plane's cache: one per kind, and one more each " \
        "time a kind's watch fell behind.")
STRATA_DECLARE_STATS(StoreStateStats, STRATA_STORE_STATE_STATS);

// The cluster-state series of /metrics, kept current from the control plane's cache:
//   strata_queue_nominal_quota / _usage / _borrowed {queue, resource}  (UsageByResource)
//   strata_queue_pending_workloads {queue, reason}
//   strata_scheduler_pending_workloads {reason}
//   strata_pods_by_phase {phase}
//   strata_apiserver_objects {kind}, strata_apiserver_pods {phase}, strata_apiserver_gpus {state}
// (rules in ClusterStateTable). A Refresh applies the objects changed since the last one to the
// table and publishes the sums, so a scrape costs the changes since the last one, not the
// number of objects. Series of queues and reasons that are gone are dropped (queue quota and
// use) or set to zero (pending workloads, pod phases), as a scan at each scrape would.
//
// Owned by the RestApi; `cache` (following every kind the API serves) and `registry` must
// outlive it. Thread-safe.
class ClusterMetrics {
 public:
  ClusterMetrics(cluster::Cache& cache, metrics::Registry& registry);

  ClusterMetrics(const ClusterMetrics&) = delete;
  ClusterMetrics& operator=(const ClusterMetrics&) = delete;

  // Brings every series up to date with each write that completed before the call, and
  // publishes them. On a failed Sync of the cache, returns its error and leaves the series as
  // they were.
  Status Refresh();

 private:
  // Sets every series from table_. REQUIRES: mutex_ held.
  void PublishLocked();

  cluster::Cache& cache_;
  QueueStats queues_;
  PendingStats scheduler_;
  PodStats pods_;
  StoreStateStats store_state_;
  std::mutex mutex_;  // guards the members below
  uint64_t cursor_ = 0;
  ClusterStateTable table_;
};

}  // namespace strata::server
