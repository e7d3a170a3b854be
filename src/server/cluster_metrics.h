#pragma once

#include <cstddef>
#include <memory>

#include "common/status.h"
#include "server/cluster_state.h"
#include "store/store.h"
#include "telemetry/metrics.h"
#include "telemetry/stats.h"
#include "telemetry/store_follower.h"

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

#define STRATA_STORE_STATE_STATS(COUNTER, GAUGE, HISTOGRAM)                                       \
  GAUGE(objects, "Objects in the store, by kind.", "kind")                                        \
  GAUGE(pods, "Pods by phase.", "phase")                                                          \
  GAUGE(gpus, "GPUs of registered nodes, by whether a pod holds them.", "state")                  \
  COUNTER(state_relists_total,                                                                    \
          "Full lists of the store behind the cluster-state series: the first scrape's, and one " \
          "each time their watch fell behind.")
STRATA_DECLARE_STATS(StoreStateStats, STRATA_STORE_STATE_STATS);

struct ClusterMetricsOptions {
  // How many store changes may wait for the follower before its watch expires and the next
  // drain lists the store again (store::WatchOptions::buffer_limit). Large enough that applying
  // a big batch of manifests does not force a relist.
  size_t watch_buffer = 100000;
};

// The cluster-state series of /metrics, kept current from the store's watch:
//   strata_queue_nominal_quota / _usage / _borrowed {queue, resource}  (ComputeQueueUsage)
//   strata_queue_pending_workloads {queue, reason}
//   strata_scheduler_pending_workloads {reason}
//   strata_pods_by_phase {phase}
//   strata_apiserver_objects {kind}, strata_apiserver_pods {phase}, strata_apiserver_gpus {state}
// (rules in ClusterStateTable). A telemetry::StoreFollower keeps a ClusterStateTable current:
// the first Refresh lists every kind once and starts a watch of the whole store; from then on a
// thread applies each change to the table as it comes, and a Refresh applies what is left and
// publishes the sums, so a scrape costs the changes since the last one, not the number of
// objects. When the watch falls behind (more than `watch_buffer` changes waiting) the store
// expires it, and the next drain lists the store again and watches from there. Series of queues
// and reasons that are gone are dropped (queue quota and use) or set to zero (pending
// workloads, pod phases), as a scan at each scrape would.
//
// Owned by the RestApi; `store` and `registry` must outlive it. Thread-safe: Refresh may be
// called from several threads (one drains at a time).
class ClusterMetrics {
 public:
  ClusterMetrics(store::Store& store, telemetry::Registry& registry,
                 ClusterMetricsOptions options = {});
  ~ClusterMetrics();

  ClusterMetrics(const ClusterMetrics&) = delete;
  ClusterMetrics& operator=(const ClusterMetrics&) = delete;

  // Brings every series up to date with each write that completed before the call, and
  // publishes them. On a failed list of the store, returns its error and leaves the series as
  // they were; the next call lists again.
  Status Refresh();

 private:
  class FollowedTable;

  // Sets every series from table_. REQUIRES: called inside follower_.Read.
  void PublishLocked();

  QueueStats queues_;
  PendingStats scheduler_;
  PodStats pods_;
  StoreStateStats store_state_;
  std::unique_ptr<FollowedTable> table_;
  telemetry::StoreFollower follower_;  // fills table_; declared after it, so stopped before
};

}  // namespace strata::server
