#pragma once

#include <map>
#include <memory>
#include <string>

#include "autoscaler/policy.h"
#include "common/clock.h"
#include "common/status.h"
#include "metrics/stats.h"

namespace strata::autoscaler {

// clang-format off
#define STRATA_AUTOSCALER_STATS(COUNTER, GAUGE, HISTOGRAM)                                       \
  GAUGE(desired_replicas, "Replicas the policy wants.", "service", "version")                   \
  GAUGE(ready_replicas, "Replicas serving.", "service", "version")                              \
  GAUGE(starting_replicas, "Replicas loading weights.", "service", "version")                   \
  GAUGE(load_requests, "Waiting + running + gateway-held requests.", "service", "version")      \
  GAUGE(gateway_queued_requests, "Requests the gateway holds.", "service", "version")           \
  GAUGE(kv_usage_ratio, "Mean KV-cache usage of ready replicas.", "service", "version")         \
  GAUGE(panic, "1 while the policy is in panic mode.", "service", "version")                    \
  GAUGE(arrival_rate_requests_per_second, "Arrival rate the policy sees.", "service",           \
        "version")                                                                              \
  GAUGE(provisioned_rate_requests_per_second, "Rate the policy provisions for (forecast, "      \
        "bursts, queue drain).", "service", "version")                                          \
  GAUGE(replica_capacity_requests_per_second, "Requests/s one replica serves within the TTFT "  \
        "objective, as learned.", "service", "version")                                         \
  COUNTER(scale_decisions_total, "Changes of the desired count.", "service", "version",         \
          "direction")
// clang-format on
STRATA_DECLARE_STATS(AutoscalerStats, STRATA_AUTOSCALER_STATS);

// A service version the autoscaler scales.
struct TargetKey {
  std::string service;
  std::string version;
  auto operator<=>(const TargetKey&) const = default;
};

// The autoscaler: one ScalingPolicy per service version, fed with signals read in-process (the
// gateway's queue and the engines' scraped figures) at the injected clock's time, so a load step
// reaches a decision at the next evaluation, not after a metrics pipeline's polling. Exports
// desired and actual replicas and the signals as `strata_autoscaler_*` metrics, and keeps each
// target's last decision with its reason for `describe service`.
//
// Owned by the control loop that runs it (or a simulation); not thread-safe. `clock` and
// `registry` must outlive it.
class Autoscaler {
 public:
  Autoscaler(const Clock& clock, metrics::Registry& registry);

  // Starts scaling `key` with `policy`. AlreadyExists when `key` is already scaled.
  Status AddTarget(const TargetKey& key, std::unique_ptr<ScalingPolicy> policy);

  // Stops scaling `key` and drops its metrics. NotFound when it is not scaled.
  Status RemoveTarget(const TargetKey& key);

  // Tells the policy of `key` how long a new replica now takes to become ready (see
  // ScalingPolicy::SetColdStart); it applies from the next Evaluate. NotFound when `key` is not
  // scaled; InvalidArgument when `cold_start` is negative.
  Status SetColdStart(const TargetKey& key, Duration cold_start);

  // Gives `sample` to the policy of `key` at the clock's now; returns its decision, which
  // also becomes LastDecision(key). NotFound when `key` is not scaled.
  Result<Decision> Evaluate(const TargetKey& key, const LoadSample& sample);

  // The last decision for `key`, or nullptr when it has none yet or is not scaled.
  const Decision* LastDecision(const TargetKey& key) const;

 private:
  struct Target {
    std::unique_ptr<ScalingPolicy> policy;
    bool decided = false;
    Decision last;
  };

  const Clock& clock_;
  AutoscalerStats stats_;
  std::map<TargetKey, Target> targets_;
};

}  // namespace strata::autoscaler
