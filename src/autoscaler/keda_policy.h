#pragma once

#include <deque>

#include "autoscaler/policy.h"

namespace strata::autoscaler {

// The knobs of KedaPolicy, defaulting to KEDA's and the HPA's documented defaults.
struct KedaOptions {
  // KEDA reads the metric once per polling interval; between polls nothing changes.
  Duration polling_interval = std::chrono::seconds(30);
  // The HPA target: average waiting requests per replica (AverageValue).
  double target_waiting = 5.0;
  // The HPA ignores a change within this fraction of the current count.
  double tolerance = 0.1;
  // The HPA keeps the highest recommendation of this window before scaling down.
  Duration scale_down_stabilization = std::chrono::seconds(300);
  // The HPA's default scale-up limit per period: the larger of +100 % and +4 replicas.
  int scale_up_pods = 4;
  double scale_up_percent = 100.0;
  // KEDA scales to zero once the trigger has been inactive this long.
  Duration cooldown_period = std::chrono::seconds(300);
  int min_replicas = 0;
  int max_replicas = 64;
};

// InvalidArgument naming the field when `options` cannot make a policy.
Status ValidateKedaOptions(const KedaOptions& options);

// The KEDA + HPA chain as a baseline: a poll of the engines' waiting requests (plus those the
// gateway holds) every polling interval, the HPA's AverageValue rule with its tolerance, its
// scale-up limit and its scale-down stabilisation, and KEDA's activation from zero and cooldown
// back to zero.
//
// Owned by the loop that feeds it; not thread-safe.
class KedaPolicy final : public ScalingPolicy {
 public:
  // REQUIRES: ValidateKedaOptions(options).ok().
  explicit KedaPolicy(KedaOptions options);

  Decision Decide(const LoadSample& sample, TimePoint now) override;
  std::string_view name() const override { return "keda"; }

 private:
  struct Recommendation {
    TimePoint at;
    int replicas;
  };

  KedaOptions options_;
  bool polled_ = false;
  TimePoint last_poll_{};
  TimePoint last_active_{};
  std::deque<Recommendation> recommendations_;
  Decision last_;
};

}  // namespace strata::autoscaler
