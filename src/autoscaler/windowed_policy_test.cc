#include "autoscaler/windowed_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace strata::autoscaler {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

LoadSample Sample(int64_t load, int ready, int64_t arrivals_total = 0) {
  LoadSample sample;
  sample.running = load;
  sample.ready_replicas = ready;
  sample.arrivals_total = arrivals_total;
  return sample;
}

WindowedOptions Target10(WindowedOptions options) {
  options.target_load = 10;
  options.target_kv_usage = 0;
  return options;
}

// Feeds `load` once a second for `duration`, starting at *now, with `ready` replicas.
Decision Feed(WindowedPolicy& policy, TimePoint& now, Duration duration, int64_t load, int ready) {
  Decision decision;
  for (Duration t{0}; t < duration; t += seconds(1)) {
    now += seconds(1);
    decision = policy.Decide(Sample(load, ready), now);
  }
  return decision;
}

TEST(WindowedPolicy, StableWindowAveragesAndPanicWindowReactsToASpike) {
  WindowedPolicy policy(Target10(KnativeDefaults()));
  TimePoint now = FakeClock::kDefaultStart;
  Decision decision = Feed(policy, now, seconds(60), 10, 1);
  EXPECT_EQ(decision.desired, 1);
  EXPECT_FALSE(decision.panic);

  // Five times the load: after one panic window its average says 5 while the stable window's
  // still says 2 (6 of 60 samples at 50).
  decision = Feed(policy, now, seconds(6), 50, 1);
  EXPECT_TRUE(decision.panic);
  EXPECT_EQ(decision.desired, 5);
  EXPECT_THAT(decision.reason, HasSubstr("panic"));

  WindowedOptions calm = Target10(KnativeDefaults());
  calm.panic_threshold = 100;  // never panics
  WindowedPolicy stable_only(calm);
  TimePoint other = FakeClock::kDefaultStart;
  Feed(stable_only, other, seconds(60), 10, 1);
  decision = Feed(stable_only, other, seconds(6), 50, 1);
  EXPECT_FALSE(decision.panic);
  EXPECT_EQ(decision.desired, 2);
}

TEST(WindowedPolicy, PanicNeverScalesDownAndEndsAfterACalmStableWindow) {
  WindowedPolicy policy(Target10(KnativeDefaults()));
  TimePoint now = FakeClock::kDefaultStart;
  Feed(policy, now, seconds(60), 10, 1);
  EXPECT_EQ(Feed(policy, now, seconds(6), 50, 1).desired, 5);
  // The spike is over; the replicas are up. Still panicking: holds 5.
  Decision decision = Feed(policy, now, seconds(30), 10, 5);
  EXPECT_TRUE(decision.panic);
  EXPECT_EQ(decision.desired, 5);
  // A whole stable window after the last over-threshold sample: back to the stable figure,
  // limited by the scale-down rate (5 / 2).
  decision = Feed(policy, now, seconds(40), 10, 5);
  EXPECT_FALSE(decision.panic);
  EXPECT_EQ(decision.desired, 2);
}

TEST(WindowedPolicy, ScalesToZeroOnlyAfterTheIdlePeriod) {
  WindowedOptions options = Target10(KnativeDefaults());
  options.scale_to_zero_after = seconds(90);
  WindowedPolicy policy(options);
  TimePoint now = FakeClock::kDefaultStart;
  Feed(policy, now, seconds(10), 5, 1);
  Decision decision = Feed(policy, now, seconds(89), 0, 1);
  EXPECT_EQ(decision.desired, 1);
  EXPECT_THAT(decision.reason, HasSubstr("keeping 1 until idle"));
  decision = Feed(policy, now, seconds(1), 0, 1);
  EXPECT_EQ(decision.desired, 0);
  EXPECT_THAT(decision.reason, HasSubstr("scaling to zero"));
  // A request held by the gateway wakes it up again.
  LoadSample held = Sample(0, 0);
  held.gateway_queued = 1;
  EXPECT_EQ(policy.Decide(held, now + seconds(1)).desired, 1);
}

TEST(WindowedPolicy, WaitingOnlyLoadCountsQueuesButRunningRequestsKeepItAwake) {
  WindowedOptions options = Target10(KnativeDefaults());
  options.count_running = false;
  options.scale_to_zero_after = seconds(90);
  WindowedPolicy policy(options);
  TimePoint now = FakeClock::kDefaultStart;
  LoadSample busy = Sample(0, 2);
  busy.running = 100;  // batched: no replica is needed for these
  busy.waiting = 25;
  busy.gateway_queued = 5;
  Decision decision;
  for (int i = 0; i < 60; ++i) decision = policy.Decide(busy, now += seconds(1));
  EXPECT_EQ(decision.desired, 3);  // (25 + 5) waiting / 10 per replica
  EXPECT_THAT(decision.reason, HasSubstr("waiting 30.0"));
  // Running requests alone never scale it to zero.
  LoadSample running_only = Sample(40, 1);
  for (int i = 0; i < 200; ++i) decision = policy.Decide(running_only, now += seconds(1));
  EXPECT_EQ(decision.desired, 1);
}

TEST(WindowedPolicy, ScaleUpAndDownRatesLimitEachDecision) {
  WindowedOptions options = Target10(KnativeDefaults());
  options.max_scale_up_rate = 2;
  options.max_scale_down_rate = 2;
  WindowedPolicy up(options);
  TimePoint now = FakeClock::kDefaultStart;
  Decision decision = Feed(up, now, seconds(60), 100, 2);
  EXPECT_EQ(decision.desired, 4);  // wants 10, at most 2 x 2 ready
  EXPECT_THAT(decision.reason, HasSubstr("scale-up rate caps at 4"));

  WindowedPolicy down(options);
  now = FakeClock::kDefaultStart;
  decision = Feed(down, now, seconds(60), 1, 8);
  EXPECT_EQ(decision.desired, 4);  // wants 1, at least 8 / 2
  EXPECT_THAT(decision.reason,
              HasSubstr("scale-down rate 2x takes 8 ready to no fewer than 4 (wants 1)"));
}

TEST(WindowedPolicy, MinAndMaxReplicasBoundEveryDecision) {
  WindowedOptions options = Target10(KnativeDefaults());
  options.min_replicas = 2;
  options.max_replicas = 3;
  WindowedPolicy policy(options);
  TimePoint now = FakeClock::kDefaultStart;
  EXPECT_EQ(Feed(policy, now, seconds(200), 0, 2).desired, 2);
  Decision decision = Feed(policy, now, seconds(60), 1000, 3);
  EXPECT_EQ(decision.desired, 3);
  EXPECT_THAT(decision.reason, HasSubstr("max 3"));
}

TEST(WindowedPolicy, KvUsageAddsReplicasWhenTheCacheFills) {
  WindowedOptions options = KnativeDefaults();
  options.target_load = 100;
  options.target_kv_usage = 0.8;
  WindowedPolicy policy(options);
  LoadSample sample = Sample(10, 2);
  sample.kv_usage = 0.95;
  Decision decision = policy.Decide(sample, FakeClock::kDefaultStart);
  EXPECT_EQ(decision.desired, 3);  // ceil(0.95 * 2 / 0.8)
  EXPECT_THAT(decision.reason, HasSubstr("KV usage 95%"));
}

// The first second of a ramp (the load grows by 1 every 5 s, from 0) at which `policy` wants
// `replicas`, fed with its own desired count as ready replicas.
int SecondsUntil(WindowedPolicy& policy, int replicas) {
  TimePoint now = FakeClock::kDefaultStart;
  int ready = 1;
  for (int second = 1; second <= 600; ++second) {
    now += seconds(1);
    const Decision decision = policy.Decide(Sample(second / 5, ready), now);
    if (decision.desired >= replicas) return second;
    ready = std::max(1, decision.desired);
  }
  return 600;
}

WindowedOptions Forecasting(Duration horizon) {
  WindowedOptions options = Target10(KnativeDefaults());
  options.panic_threshold = 100;  // the stable window alone decides
  options.forecast_horizon = horizon;
  return options;
}

TEST(WindowedPolicy, ARisingLoadScalesUpSoonerWithTheForecast) {
  WindowedPolicy knative(Forecasting(Duration{0}));
  WindowedPolicy forecast(Forecasting(seconds(60)));
  const int without = SecondsUntil(knative, 3);
  const int with = SecondsUntil(forecast, 3);
  // Knative: the stable mean trails the load by half a window (30 s), so 3 replicas (load > 20)
  // come at ~130 s; the forecast adds the 30 s lag and the 60 s horizon: ~40 s.
  EXPECT_GT(without, 120);
  EXPECT_LT(with, without - 60);

  TimePoint now = FakeClock::kDefaultStart;
  WindowedPolicy rising(Forecasting(seconds(60)));
  Decision decision;
  for (int second = 1; second <= 60; ++second) {
    now += seconds(1);
    decision = rising.Decide(Sample(second / 5, 1), now);
  }
  EXPECT_THAT(decision.reason, HasSubstr("trend forecasts"));
}

TEST(WindowedPolicy, AFallingLoadScalesDownNoSoonerWithTheForecast) {
  WindowedPolicy knative(Forecasting(Duration{0}));
  WindowedPolicy forecast(Forecasting(seconds(60)));
  TimePoint now = FakeClock::kDefaultStart;
  for (int second = 1; second <= 120; ++second) {
    now += seconds(1);
    const int64_t load = std::max(0, 60 - second / 2);
    EXPECT_EQ(forecast.Decide(Sample(load, 6), now).desired,
              knative.Decide(Sample(load, 6), now).desired)
        << "at " << second << " s";
  }
}

TEST(WindowedPolicy, SetColdStartMovesTheForecastHorizon) {
  WindowedPolicy short_horizon(Forecasting(seconds(10)));
  WindowedPolicy learned(Forecasting(seconds(10)));
  learned.SetColdStart(seconds(120));
  EXPECT_EQ(learned.options().forecast_horizon, seconds(120));
  EXPECT_LT(SecondsUntil(learned, 3), SecondsUntil(short_horizon, 3));

  // With the forecast off, a measured cold start leaves Knative's behaviour alone.
  WindowedPolicy knative(Forecasting(Duration{0}));
  knative.SetColdStart(seconds(120));
  EXPECT_EQ(knative.options().forecast_horizon, Duration{0});
}

TEST(WindowedPolicy, RejectsBadOptionsNamingTheField) {
  WindowedOptions options = KnativeDefaults();
  options.panic_window = seconds(120);
  EXPECT_THAT(ValidateWindowedOptions(options).message(), HasSubstr("panicWindow"));
  options = KnativeDefaults();
  options.min_replicas = 5;
  options.max_replicas = 2;
  EXPECT_THAT(ValidateWindowedOptions(options).message(), HasSubstr("minReplicas"));
  options = KnativeDefaults();
  options.target_load = 0;
  EXPECT_THAT(ValidateWindowedOptions(options).message(), HasSubstr("targetLoad"));
  options = KnativeDefaults();
  options.forecast_horizon = seconds(-1);
  EXPECT_THAT(ValidateWindowedOptions(options).message(), HasSubstr("forecastHorizon"));
}

}  // namespace
}  // namespace strata::autoscaler
