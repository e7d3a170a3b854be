#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "autoscaler/rate_policy.h"
#include "common/clock.h"
#include "common/status.h"
#include "engine/engine_model.h"
#include "sim/trace_readers.h"

namespace strata::sim {

// Who decides the replica count in `strata sim autoscale`.
enum class AutoscalePolicy {
  kStrata,      // forecast arrival rate over learned per-replica capacity (RateDefaults)
  kKpa,         // Knative's KPA defaults
  kKeda,        // KEDA polling waiting requests + the HPA's defaults
  kStaticPeak,  // enough replicas for the trace's peak minute (or a count given), always on
};

// "strata", "kpa", "keda", "static-peak".
std::string_view AutoscalePolicyName(AutoscalePolicy policy);
// The inverse of AutoscalePolicyName; InvalidArgument naming the accepted values otherwise.
Result<AutoscalePolicy> ParseAutoscalePolicy(std::string_view name);

struct AutoscaleSimOptions {
  engine::EngineOptions engine;  // every replica's engine
  AutoscalePolicy policy = AutoscalePolicy::kStrata;
  // From a replica's creation to its readiness (weights loaded); its GPU is paid for meanwhile.
  Duration cold_start = std::chrono::seconds(82);
  Duration ttft_slo = std::chrono::seconds(2);
  // How often the autoscaler reads the signals and decides (strata: in-process, every second;
  // Knative's autoscaler ticks every 2 s; KEDA's own 30 s polling sits inside its policy).
  Duration decision_interval = std::chrono::seconds(1);
  // Load (waiting + running + gateway-held requests) per replica for kpa.
  double target_load = 12;
  // strata's spare capacity over its forecast need (RateOptions::headroom).
  double headroom = autoscaler::RateOptions{}.headroom;
  // strata plans in prompt tokens instead of requests (RateOptions::plan_in_prompt_tokens).
  bool plan_in_prompt_tokens = autoscaler::RateOptions{}.plan_in_prompt_tokens;
  // strata's busy share per replica (RateOptions::target_busy_share; 0: capacity learned from
  // misses alone). The replay reports each replica's time with a request waiting for its first
  // token, as the gateway sees it.
  double target_busy_share = autoscaler::RateOptions{}.target_busy_share;
  // Waiting requests per replica for keda.
  double keda_target_waiting = 5;
  // static-peak's always-on replicas; 0: the fewest that serve the busiest 60 s by arrivals
  // (PeakMinuteReplicas). A count lets a bound compare other sizings, or a minute replayed
  // alone be measured at every count.
  int static_replicas = 0;
  int max_replicas = 64;
  // The activator: with no ready replica, the gateway holds up to `activator_capacity`
  // requests for up to `activator_timeout` each, then answers 503.
  size_t activator_capacity = 10000;
  Duration activator_timeout = std::chrono::seconds(300);
};

// One minute of a replay, counted from the first arrival.
struct AutoscaleMinute {
  int64_t arrivals = 0;  // requests that arrived in the minute
  int64_t late = 0;      // of those, answered after the SLO or refused
  // Mean replicas paid for (starting, ready or draining) and mean ready (serving) over the
  // minute, sampled at each decision.
  double replicas_paid = 0;
  double replicas_ready = 0;
  // At the minute's last decision: the replicas wanted, and for strata the arrival rate it
  // provisioned for and the requests/s it counted on per replica (0 for the other policies).
  int desired = 0;
  double forecast_rate = 0;
  double capacity = 0;
};

// What one replay measured.
struct AutoscaleSimReport {
  std::string policy;
  double cold_start_seconds = 0;
  size_t requests = 0;
  size_t completed = 0;
  size_t rejected = 0;                // 503 from the activator, or too large for an engine
  double slo_attainment = 0;          // requests with TTFT <= the SLO, over all requests
  double ttft_p50 = 0, ttft_p99 = 0;  // seconds, completed requests
  double gpu_hours = 0;               // replica-hours from creation to stop, cold starts included
  // Ready at the start: what the trace's first cold start (at least its first minute) needs,
  // since no policy can change the count before then; static-peak: the peak minute's need.
  int initial_replicas = 0;
  int peak_replicas = 0;  // most replicas held at once
  int scale_ups = 0;      // decisions that added replicas
  int scale_downs = 0;    // decisions that removed replicas
  // Requests the gateway held because no replica was ready, and how long they waited.
  size_t held_requests = 0;
  double held_wait_max = 0;
  // Requests that arrived while a scale-up was in flight, and their TTFT p99 (queueing during
  // scale-up, whether held by the gateway or queued in a busy engine).
  size_t during_scale_up = 0;
  double during_scale_up_ttft_p99 = 0;
  double span_seconds = 0;
  // strata: requests/s per replica within the SLO as learned by the end (0 for the others).
  double learned_capacity = 0;
  // Minute by minute, to see where a policy paid or missed.
  std::vector<AutoscaleMinute> minutes;

  nlohmann::ordered_json ToJson() const;
};

// The number of always-on replicas that serve the busiest 60 s of `trace` with at least 99 % of
// requests within the TTFT SLO (found by replaying that minute), at most options.max_replicas.
// InvalidArgument for an empty trace or engine options an engine rejects.
Result<int> PeakMinuteReplicas(const std::vector<TraceRequest>& trace,
                               const AutoscaleSimOptions& options);

// Replays `trace` in virtual time: arrivals go through the gateway's real Picker to engine
// models; the real autoscaler policy reads the signals every decision interval and replicas
// start (after the cold start) and drain (no new requests; stop when empty) as it decides.
// Deterministic for a given input. InvalidArgument for an empty trace or bad options.
Result<AutoscaleSimReport> RunAutoscaleSim(const std::vector<TraceRequest>& trace,
                                           const AutoscaleSimOptions& options);

}  // namespace strata::sim
