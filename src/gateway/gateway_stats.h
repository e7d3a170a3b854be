#pragma once

#include "metrics/stats.h"

namespace strata::gateway {

// Bucket bounds for request latencies: 1 ms to ~65 s.
inline std::vector<double> LatencyBuckets() { return metrics::ExponentialBuckets(0.001, 2.0, 17); }

// The gateway's metrics, exported as strata_gateway_<name>.
#define STRATA_GATEWAY_STATS(COUNTER, GAUGE, HISTOGRAM)                                           \
  COUNTER(requests_total, "Requests answered, by model, version, tenant and HTTP code.", "model", \
          "version", "tenant", "code")                                                            \
  COUNTER(tokens_total, "Tokens settled, by model, tenant and kind (prompt, completion).",        \
          "model", "tenant", "kind")                                                              \
  COUNTER(picks_total, "Endpoint picker decisions, by model, version and reason.", "model",       \
          "version", "reason")                                                                    \
  COUNTER(upstream_failures_total, "Replica failures (connect, write, read), by endpoint.",       \
          "endpoint")                                                                             \
  COUNTER(retries_total, "Requests retried on another replica.", "model")                         \
  COUNTER(priority_requests_total,                                                                \
          "Requests routed, by model, version and priority class (their objective's, named in "   \
          "x-gateway-inference-objective, else their tenant's).",                                 \
          "model", "version", "priority")                                                         \
  COUNTER(quota_rejections_total, "Requests answered 429 for quota, by tenant.", "tenant")        \
  COUNTER(scrapes_total, "Replica /metrics scrapes, by endpoint and result.", "endpoint",         \
          "result")                                                                               \
  GAUGE(in_flight_requests, "Requests being proxied now.")                                        \
  GAUGE(activator_held_requests, "Requests waiting for a replica of their model (activator).",    \
        "model")                                                                                  \
  GAUGE(endpoint_up, "1 when the replica answered its last scrape and is not ejected.",           \
        "endpoint")                                                                               \
  HISTOGRAM(ttft_seconds,                                                                         \
            "Time to first token at the gateway (first body byte for "                            \
            "non-streaming answers).",                                                            \
            LatencyBuckets(), "model", "version")                                                 \
  HISTOGRAM(tpot_seconds, "Time per output token after the first, streaming answers.",            \
            LatencyBuckets(), "model", "version")                                                 \
  HISTOGRAM(e2e_seconds, "Request latency from arrival to last byte.", LatencyBuckets(), "model", \
            "version")                                                                            \
  HISTOGRAM(queue_seconds, "Time waiting for token quota.", LatencyBuckets(), "tenant")

STRATA_DECLARE_STATS(GatewayStats, STRATA_GATEWAY_STATS);

}  // namespace strata::gateway
