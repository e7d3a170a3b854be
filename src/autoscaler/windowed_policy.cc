#include "autoscaler/windowed_policy.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"
#include "fmt/format.h"

namespace strata::autoscaler {

WindowedOptions KnativeDefaults() {
  WindowedOptions options;
  options.name = "kpa";
  options.stable_window = std::chrono::seconds(60);
  options.panic_window = std::chrono::seconds(6);
  options.panic_threshold = 2.0;
  options.max_scale_up_rate = 1000.0;
  options.max_scale_down_rate = 2.0;
  options.scale_to_zero_after = std::chrono::seconds(90);
  return options;
}

Status ValidateWindowedOptions(const WindowedOptions& options) {
  Status bounds = ValidateReplicaBounds(options.min_replicas, options.max_replicas);
  if (!bounds.ok()) return bounds;
  if (!(options.target_load > 0)) return InvalidArgumentError("targetLoad: must be > 0");
  if (options.target_kv_usage < 0 || options.target_kv_usage > 1) {
    return InvalidArgumentError("targetKvUsage: must be in [0, 1]");
  }
  if (options.stable_window <= Duration{0}) {
    return InvalidArgumentError("stableWindow: must be > 0");
  }
  if (options.panic_window <= Duration{0} || options.panic_window > options.stable_window) {
    return InvalidArgumentError("panicWindow: must be > 0 and at most the stable window");
  }
  if (!(options.panic_threshold >= 1)) return InvalidArgumentError("panicThreshold: must be >= 1");
  if (!(options.max_scale_up_rate > 1)) return InvalidArgumentError("maxScaleUpRate: must be > 1");
  if (!(options.max_scale_down_rate > 1)) {
    return InvalidArgumentError("maxScaleDownRate: must be > 1");
  }
  if (options.scale_to_zero_after < Duration{0}) {
    return InvalidArgumentError("scaleToZeroAfter: must be >= 0");
  }
  if (options.forecast_horizon < Duration{0}) {
    return InvalidArgumentError("forecastHorizon: must be >= 0");
  }
  return Status::Ok();
}

WindowedPolicy::WindowedPolicy(WindowedOptions options) : options_(std::move(options)) {
  STRATA_CHECK(ValidateWindowedOptions(options_).ok());
}

double WindowedPolicy::AverageLoad(TimePoint now, Duration window) const {
  double sum = 0;
  int count = 0;
  for (auto it = points_.rbegin(); it != points_.rend() && now - it->at < window; ++it) {
    sum += it->load;
    ++count;
  }
  return count == 0 ? 0 : sum / count;
}

void WindowedPolicy::SetColdStart(Duration cold_start) {
  STRATA_CHECK(cold_start >= Duration{0});
  if (options_.forecast_horizon > Duration{0}) options_.forecast_horizon = cold_start;
}

double WindowedPolicy::ForecastLoad(TimePoint now, double stable_load, double panic_load) const {
  if (options_.forecast_horizon <= Duration{0}) return stable_load;
  // Least-squares slope of load over time, in the samples of the stable window.
  double n = 0, sum_t = 0, sum_load = 0, sum_tt = 0, sum_t_load = 0;
  for (auto it = points_.rbegin(); it != points_.rend() && now - it->at < options_.stable_window;
       ++it) {
    const double t = -ToSeconds(now - it->at);
    n += 1;
    sum_t += t;
    sum_load += it->load;
    sum_tt += t * t;
    sum_t_load += t * it->load;
  }
  const double spread = n * sum_tt - sum_t * sum_t;
  if (n < 2 || spread <= 0) return stable_load;
  const double slope = (n * sum_t_load - sum_t * sum_load) / spread;
  // The mean sits at the samples' mean time; the forecast is for the horizon from now.
  const double ahead = ToSeconds(options_.forecast_horizon) - sum_t / n;
  const double cap = options_.panic_threshold * std::max(stable_load, panic_load);
  return std::clamp(stable_load + slope * ahead, stable_load, std::max(stable_load, cap));
}

int WindowedPolicy::ReplicasFor(double load) const {
  return static_cast<int>(std::ceil(load / options_.target_load - 1e-9));
}

Decision WindowedPolicy::Decide(const LoadSample& sample, TimePoint now) {
  const bool arrived = !points_.empty() && sample.arrivals_total > points_.back().arrivals_total;
  if (sample.Load() > 0 || arrived) {
    last_active_ = now;
    seen_activity_ = true;
  }
  const int64_t load =
      options_.count_running ? sample.Load() : sample.waiting + sample.gateway_queued;
  points_.push_back({now, static_cast<double>(load), sample.arrivals_total});
  while (now - points_.front().at > options_.stable_window) points_.pop_front();

  const double stable_load = AverageLoad(now, options_.stable_window);
  const double panic_load = AverageLoad(now, options_.panic_window);
  const double forecast_load = ForecastLoad(now, stable_load, panic_load);
  int want_stable = ReplicasFor(forecast_load);
  int want_panic = ReplicasFor(panic_load);
  std::string why =
      fmt::format("{} {:.1f} over {}s, {:.1f} over {}s, target {:.0f}/replica",
                  options_.count_running ? "load" : "waiting", stable_load,
                  options_.stable_window / std::chrono::seconds(1), panic_load,
                  options_.panic_window / std::chrono::seconds(1), options_.target_load);
  if (forecast_load > stable_load) {
    why += fmt::format("; trend forecasts {:.1f} in {}s", forecast_load,
                       options_.forecast_horizon / std::chrono::seconds(1));
  }
  if (options_.target_kv_usage > 0 && sample.ready_replicas > 0) {
    const int want_kv = static_cast<int>(
        std::ceil(sample.kv_usage * sample.ready_replicas / options_.target_kv_usage - 1e-9));
    if (want_kv > want_stable) {
      why += fmt::format("; KV usage {:.0f}% wants {}", sample.kv_usage * 100, want_kv);
    }
    want_stable = std::max(want_stable, want_kv);
    want_panic = std::max(want_panic, want_kv);
  }

  const int panic_base = std::max(1, sample.ready_replicas);
  if (want_panic >= options_.panic_threshold * panic_base) {
    if (!panicking_) why += "; entering panic";
    panicking_ = true;
    panic_since_ = now;
  } else if (panicking_ && now - panic_since_ >= options_.stable_window) {
    panicking_ = false;
    why += "; leaving panic";
  }
  int desired = panicking_ ? std::max(want_panic, last_desired_) : want_stable;
  if (panicking_) why += fmt::format("; panic wants {}", desired);

  const int up_limit = static_cast<int>(std::ceil(panic_base * options_.max_scale_up_rate - 1e-9));
  const int down_limit = static_cast<int>(panic_base / options_.max_scale_down_rate);
  if (desired > up_limit) why += fmt::format("; scale-up rate caps at {}", up_limit);
  if (desired < down_limit && sample.ready_replicas > 0) {
    // Said as a step, from the ready count: "keeps 1" read as no change on a 3 -> 1 decision.
    why += fmt::format("; scale-down rate {:g}x takes {} ready to no fewer than {} (wants {})",
                       options_.max_scale_down_rate, panic_base, down_limit, desired);
  }
  desired = std::clamp(desired, sample.ready_replicas > 0 ? down_limit : 0, up_limit);

  const bool idle = !seen_activity_ || now - last_active_ >= options_.scale_to_zero_after;
  desired = ApplyIdleAndBounds(
      desired, sample, idle,
      fmt::format(
          "until idle for {}s",
          std::chrono::duration_cast<std::chrono::seconds>(options_.scale_to_zero_after).count()),
      options_.min_replicas, options_.max_replicas, why);
  last_desired_ = desired;
  return Decision{desired, panicking_, fmt::format("{} -> {} replicas", why, desired)};
}

}  // namespace strata::autoscaler
