#include "autoscaler/keda_policy.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"
#include "fmt/format.h"

namespace strata::autoscaler {

Status ValidateKedaOptions(const KedaOptions& options) {
  Status bounds = ValidateReplicaBounds(options.min_replicas, options.max_replicas);
  if (!bounds.ok()) return bounds;
  if (options.polling_interval <= Duration{0}) {
    return InvalidArgumentError("pollingInterval: must be > 0");
  }
  if (!(options.target_waiting > 0)) return InvalidArgumentError("targetWaiting: must be > 0");
  if (options.tolerance < 0) return InvalidArgumentError("tolerance: must be >= 0");
  if (options.scale_down_stabilization < Duration{0} || options.cooldown_period < Duration{0}) {
    return InvalidArgumentError("scaleDownStabilization, cooldownPeriod: must be >= 0");
  }
  if (options.scale_up_pods < 1 || !(options.scale_up_percent > 0)) {
    return InvalidArgumentError("scaleUpPods, scaleUpPercent: must be > 0");
  }
  return Status::Ok();
}

KedaPolicy::KedaPolicy(KedaOptions options) : options_(options) {
  STRATA_CHECK(ValidateKedaOptions(options_).ok());
  last_.desired = options_.min_replicas;
  last_.reason = "not polled yet";
}

Decision KedaPolicy::Decide(const LoadSample& sample, TimePoint now) {
  if (polled_ && now - last_poll_ < options_.polling_interval) return last_;
  // The cooldown counts from when KEDA started watching, or from the last active poll.
  if (!polled_) last_active_ = now;
  polled_ = true;
  last_poll_ = now;
  const int64_t waiting = sample.waiting + sample.gateway_queued;
  const int current = sample.ready_replicas + sample.starting_replicas;
  if (waiting > 0) last_active_ = now;

  Decision decision;
  if (current == 0) {
    // KEDA owns 0 <-> 1: it activates on any waiting request; the HPA takes it from there.
    decision.desired = std::max(options_.min_replicas, waiting > 0 ? 1 : 0);
    decision.reason = fmt::format("poll: {} waiting with no replica -> {}", waiting,
                                  waiting > 0 ? "activating 1 replica" : "staying at zero");
  } else {
    int recommended = static_cast<int>(std::ceil(waiting / options_.target_waiting - 1e-9));
    const double ratio = waiting / (options_.target_waiting * current);
    std::string why = fmt::format("poll: {} waiting / target {:.0f} per replica wants {}", waiting,
                                  options_.target_waiting, recommended);
    if (std::abs(ratio - 1.0) <= options_.tolerance) {
      recommended = current;
      why += " (within tolerance)";
    }
    recommendations_.push_back({now, std::max(recommended, 1)});
    while (now - recommendations_.front().at > options_.scale_down_stabilization) {
      recommendations_.pop_front();
    }
    int desired = recommended;
    if (desired < current) {
      for (const Recommendation& r : recommendations_) desired = std::max(desired, r.replicas);
      desired = std::min(desired, current);
      if (desired > recommended) why += fmt::format("; stabilised at {}", desired);
    }
    const int up_limit = std::max(
        current + options_.scale_up_pods,
        static_cast<int>(std::ceil(current * (1 + options_.scale_up_percent / 100) - 1e-9)));
    if (desired > up_limit) {
      why += fmt::format("; scale-up limit {}", up_limit);
      desired = up_limit;
    }
    // The HPA never goes below one replica; KEDA takes the last one away after the cooldown.
    desired = std::max(desired, 1);
    if (waiting == 0 && now - last_active_ >= options_.cooldown_period) {
      desired = 0;
      why += fmt::format("; inactive for {}s: scaling to zero",
                         options_.cooldown_period / std::chrono::seconds(1));
    }
    decision.desired = std::clamp(desired, options_.min_replicas, options_.max_replicas);
    decision.reason = fmt::format("{} -> {} replicas", why, decision.desired);
  }
  last_ = decision;
  return decision;
}

}  // namespace strata::autoscaler
