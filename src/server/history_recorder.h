#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cluster/cache.h"
#include "common/clock.h"
#include "common/status.h"
#include "gateway/server.h"
#include "history/series_store.h"
#include "metrics/metrics.h"

namespace strata::server {

// The gateway's figures per model version (GatewayServer::Signals); empty when there is no
// gateway.
using GatewaySignalSource = std::function<std::vector<gateway::VersionSignals>()>;

// Samples what the dashboard plots into a history::SeriesStore, one sample per call:
//
//   services/NS/NAME  desired, ready, replicas {version} (the Service's status); each scale
//                     decision of status.decisions as a "scale" event (version, from, to,
//                     reason); for the service's model, between two samples: ttft_seconds and
//                     tpot_seconds {quantile 0.5, 0.99}, requests_per_second {version},
//                     tenant_requests_per_second and throttled_per_second (answered 429)
//                     {tenant}, tenant_tokens_per_second {tenant, kind} (the gateway's series of
//                     /metrics); goodput_per_second and tokens_per_second {version} (answered
//                     within the TTFT objective; gateway signals); prefix_hit_ratio and
//                     prefix_hits_per_second {replica} (the engines' prefix-cache counters).
//   queues/NAME       used, nominal, borrowed {flavor, resource "gpu"} (the Queue's status,
//                     in GPUs), pending and admitted workloads, and share: the dominant share
//                     of nominal quota used over the queue's fair-share weight.
//   jobs/NS/NAME      gpu_utilisation {pod}: the mean DCGM_FI_DEV_GPU_UTIL of a running pod's
//                     GPUs; each checkpoint seen in status.lastCheckpointTime as a
//                     "checkpoint" event.
//   cluster           gpus {state capacity, allocated, busy} and team_allocated_gpus,
//                     team_busy_gpus {team} (strata_gpu_*), pending_jobs.
//
// Rates and percentiles cover the interval since the previous call (none on the first); a
// counter that went down (a restart) counts from zero.
//
// Owned by the loop that calls RecordOnce; `cache`, `registry` and `store` must outlive it.
// Not thread-safe: one caller at a time.
class HistoryRecorder {
 public:
  HistoryRecorder(cluster::Cache& cache, const metrics::Registry& registry,
                  history::SeriesStore& store, const Clock& clock, GatewaySignalSource gateway);

  // Takes one sample at the clock's time. Returns the cache's Sync error, or InvalidArgument
  // when the metrics page does not parse; nothing is recorded then.
  Status RecordOnce();

 private:
  // The increase of the counter `key` since the last call per second of `seconds` (from zero
  // for a counter not seen then), or -1 without a previous sample; remembers `value`.
  double Rate(const std::string& key, double value, double seconds);

  cluster::Cache& cache_;
  const metrics::Registry& registry_;
  history::SeriesStore& store_;
  const Clock& clock_;
  const GatewaySignalSource gateway_;
  std::map<std::string, double> counters_;       // the last value of each counter, by key
  std::map<std::string, double> seen_counters_;  // this call's, becoming counters_
  // The last cumulative histogram buckets per model and family: le -> count.
  std::map<std::string, std::map<double, double>> histograms_;
  TimePoint last_{};
};

// The q-quantile of a cumulative histogram (le -> count, +Inf included), interpolated within
// its bucket as Prometheus' histogram_quantile does; NaN without observations. A rank in the
// +Inf bucket answers the highest finite bound.
double HistogramQuantile(const std::map<double, double>& cumulative, double q);

}  // namespace strata::server
