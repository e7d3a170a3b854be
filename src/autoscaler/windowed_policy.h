#pragma once

#include <deque>
#include <string>

#include "autoscaler/policy.h"

namespace strata::autoscaler {

// The knobs of WindowedPolicy. Plain data; see KnativeDefaults.
struct WindowedOptions {
  std::string name = "kpa";
  // Load (waiting + running + gateway-queued requests) one replica should carry.
  double target_load = 12.0;
  // false: the load is the waiting requests alone (engines' queues plus the gateway's), as
  // KEDA's trigger on vllm:num_requests_waiting counts; running requests still keep a service
  // from scaling to zero.
  bool count_running = true;
  // Mean KV-cache usage one replica should stay under; 0 ignores KV usage.
  double target_kv_usage = 0.8;
  // Knative's shape: desired replicas follow the load averaged over the stable window, unless
  // the panic window's average asks for panic_threshold times the ready replicas; then the
  // panic figure rules, and nothing scales down, until a whole stable window passes calm.
  Duration stable_window = std::chrono::seconds(60);
  Duration panic_window = std::chrono::seconds(6);
  double panic_threshold = 2.0;
  // One decision moves at most to ceil(ready * up rate) and at least to floor(ready / down
  // rate).
  double max_scale_up_rate = 1000.0;
  double max_scale_down_rate = 2.0;
  int min_replicas = 0;
  int max_replicas = 64;
  // No load and no arrivals for this long before the last replica goes (scale to zero).
  Duration scale_to_zero_after = std::chrono::seconds(90);
  // Zero: off, Knative's behaviour. Otherwise the stable window's load is extrapolated along its
  // trend (the least-squares slope of its samples) to `forecast_horizon` from now, usually a
  // replica's cold start, so scale-up begins before the queue builds. The forecast only adds:
  // a falling trend never scales down sooner, and it grows the load at most panic_threshold x.
  // SetColdStart replaces the horizon while the forecast is on.
  Duration forecast_horizon{0};
};

// Knative's KPA defaults: 60 s stable / 6 s panic windows, panic at 200 %, scale-up rate 1000,
// scale-down rate 2, scale to zero after the stable window plus its 30 s grace period.
WindowedOptions KnativeDefaults();

// InvalidArgument naming the field when `options` cannot make a policy.
Status ValidateWindowedOptions(const WindowedOptions& options);

// The windowed autoscaling policy: Knative's KPA algorithm, desired replicas from the load in
// the system over a per-replica target, optionally with the stable load forecast one cold start
// ahead. Keeps the samples of its stable window.
//
// Owned by the loop that feeds it; not thread-safe.
class WindowedPolicy final : public ScalingPolicy {
 public:
  // REQUIRES: ValidateWindowedOptions(options).ok().
  explicit WindowedPolicy(WindowedOptions options);

  Decision Decide(const LoadSample& sample, TimePoint now) override;
  std::string_view name() const override { return options_.name; }
  // With the forecast on, it looks `cold_start` ahead from the next decision on; with it off,
  // nothing changes.
  void SetColdStart(Duration cold_start) override;

  const WindowedOptions& options() const { return options_; }

 private:
  struct Point {
    TimePoint at;
    double load;
    int64_t arrivals_total;
  };

  // Mean load of the samples taken within `window` of `now`.
  double AverageLoad(TimePoint now, Duration window) const;
  // The stable window's load extrapolated to forecast_horizon from `now` (see the option);
  // `stable_load` when the forecast is off or the window holds fewer than two samples.
  double ForecastLoad(TimePoint now, double stable_load, double panic_load) const;
  int ReplicasFor(double load) const;

  WindowedOptions options_;
  std::deque<Point> points_;
  bool panicking_ = false;
  TimePoint panic_since_{};
  TimePoint last_active_{};
  bool seen_activity_ = false;
  int last_desired_ = 0;
};

}  // namespace strata::autoscaler
