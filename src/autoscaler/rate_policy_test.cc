#include "autoscaler/rate_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace strata::autoscaler {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

// Options without the margins, so expected counts are simple arithmetic: capacity 1 req/s per
// replica that learning does not move unless a test asks it to.
RateOptions Plain(Duration cold_start = seconds(60)) {
  RateOptions options = RateDefaults(cold_start);
  options.headroom = 0;
  options.burst_sigmas = 0;
  options.initial_capacity = 1.0;
  options.min_window_requests = std::numeric_limits<int64_t>::max();  // learns nothing
  return options;
}

// A synthetic service fed to a policy once a second: arrivals at a given rate, answered one
// for one (a share of them late), with the policy's own desired count as ready replicas.
class Load {
 public:
  explicit Load(RatePolicy& policy) : policy_(policy) {}

  // `seconds_long` decisions at `rate` req/s with `queued` requests waiting in the engines.
  Decision Run(int seconds_long, double rate, int64_t queued = 0, double late_share = 0) {
    Decision decision;
    for (int i = 0; i < seconds_long; ++i) {
      now_ += seconds(1);
      arrivals_ += rate;
      late_ += rate * late_share;
      LoadSample sample;
      sample.waiting = queued;
      sample.arrivals_total = static_cast<int64_t>(arrivals_);
      sample.answered_total = static_cast<int64_t>(arrivals_);
      sample.late_total = static_cast<int64_t>(late_);
      sample.ready_replicas = ready_;
      decision = policy_.Decide(sample, now_);
      if (decision.desired > 0) ready_ = decision.desired;
      if (decision.desired == 0) ready_ = 0;
    }
    return decision;
  }

  void SetReady(int ready) { ready_ = ready; }

 private:
  RatePolicy& policy_;
  TimePoint now_ = FakeClock::kDefaultStart;
  double arrivals_ = 0;
  double late_ = 0;
  int ready_ = 1;
};

TEST(RatePolicy, SizesFromTheArrivalRateOverTheCapacity) {
  RatePolicy policy(Plain());
  Load load(policy);
  const Decision decision = load.Run(300, 4.0);
  EXPECT_EQ(decision.desired, 4);
  EXPECT_DOUBLE_EQ(decision.arrival_rate, 4.0);
  EXPECT_DOUBLE_EQ(decision.capacity_per_replica, 1.0);
  EXPECT_THAT(decision.reason, HasSubstr("arrivals 4.00 req/s over 10s"));
  EXPECT_THAT(decision.reason, HasSubstr("-> 4 replicas"));
}

TEST(RatePolicy, AQueueAsksOnlyForTheCapacityThatDrainsIt) {
  RatePolicy policy(Plain());
  Load load(policy);
  load.Run(300, 4.0);
  // 300 requests queued at 4 req/s: draining them within the 30 s drain time takes 10 more
  // req/s, so 14 replicas, where one replica per 12 queued requests would ask for 25 more.
  const Decision decision = load.Run(1, 4.0, 300);
  EXPECT_EQ(decision.desired, 14);
  EXPECT_THAT(decision.reason, HasSubstr("300 queued"));
}

// A ramp from 1 req/s growing by 0.02 req/s every second: the first second at which `options`
// wants more replicas than the current rate needs (ready is what it asked for).
int FirstSecondAhead(const RateOptions& options) {
  RatePolicy policy(options);
  Load load(policy);
  load.Run(300, 1.0);
  for (int t = 1; t <= 600; ++t) {
    const double rate = 1 + 0.02 * t;
    if (load.Run(1, rate).desired > static_cast<int>(std::ceil(rate))) return t;
  }
  return 0;
}

TEST(RatePolicy, TheForecastStartsScaleUpAColdStartAhead) {
  // With a 120 s cold start, replicas are asked for ahead of the current rate once the trend
  // windows have seen the ramp; without one, the trend only brings the lagging level up to now.
  const int with_forecast = FirstSecondAhead(Plain(seconds(120)));
  const int without_forecast = FirstSecondAhead(Plain(Duration{0}));
  ASSERT_GT(with_forecast, 0);
  EXPECT_LT(with_forecast, 120);
  EXPECT_TRUE(without_forecast == 0 || without_forecast >= with_forecast + 60) << without_forecast;
}

// The forecast rate after 300 s at 1 req/s and then 300 s of a ramp gaining 0.01 req/s every
// second (4 req/s at the end), with `cold_start`.
double ForecastOnARamp(Duration cold_start) {
  RatePolicy policy(Plain(cold_start));
  Load load(policy);
  load.Run(300, 1.0);
  Decision decision;
  for (int t = 1; t <= 300; ++t) decision = load.Run(1, 1 + 0.01 * t);
  return decision.forecast_rate;
}

TEST(RatePolicy, TheTrendIsExtrapolatedOverTheColdStartButNoFurtherThanATrendWindow) {
  // The 60 s level is 3.7 req/s, centred 30 s back, and the trend 0.01 req/s per second. A 90 s
  // cold start looks 90 + 30 s ahead: 3.7 + 1.2. A 600 s one looks only one 120 s trend window
  // (+ 30 s) ahead, 3.7 + 1.5, not ten minutes on (3.7 + 6.3, capped at 1.5 x 4 = 6).
  EXPECT_NEAR(ForecastOnARamp(seconds(90)), 4.9, 0.05);
  EXPECT_NEAR(ForecastOnARamp(seconds(600)), 5.2, 0.05);
}

// Options that learn from 50 answered requests a window, starting at 2 req/s per replica, each
// revision moving `smoothing` of the way; and the first window of a test: 4 req/s on 2 replicas
// with 10 % of first tokens late, so 2 req/s per replica missed and the target is 0.9 x 2.
RateOptions Learning(double smoothing) {
  RateOptions options = Plain();
  options.capacity_probe = 0.05;
  options.min_window_requests = 50;
  options.initial_capacity = 2.0;
  options.capacity_smoothing = smoothing;
  return options;
}

Decision MissedWindow(Load& load) {
  load.SetReady(2);
  return load.Run(61, 4.0, 0, 0.10);
}

TEST(RatePolicy, CapacityFallsToTheRateThatMissedAndRisesWhileCleanWindowsCarryThePlan) {
  RatePolicy policy(Learning(1));
  Load load(policy);
  Decision decision = MissedWindow(load);
  EXPECT_NEAR(policy.capacity(), 1.8, 1e-9);
  EXPECT_THAT(decision.reason, HasSubstr("late at 2.00 req/s per replica: capacity 2.00 -> 1.80"));
  // Then clean windows at the planned load: the estimate rises by 5 % a window.
  load.Run(60, 4.0);
  const double after_clean = policy.capacity();
  EXPECT_GT(after_clean, 1.8);
  load.Run(60, 4.0);
  EXPECT_GT(policy.capacity(), after_clean);
}

TEST(RatePolicy, SmoothingMovesTheEstimateAShareOfTheWay) {
  RatePolicy policy(Learning(0.25));
  Load load(policy);
  // The window says 1.8 (as above); a quarter of the way from 2.0 is 1.95.
  const Decision decision = MissedWindow(load);
  EXPECT_NEAR(policy.capacity(), 1.95, 1e-9);
  EXPECT_THAT(decision.reason, HasSubstr("capacity 2.00 -> 1.95"));
}

TEST(RatePolicy, SetColdStartMovesTheForecastHorizon) {
  RateOptions options = Plain(seconds(10));
  RatePolicy learned(options);
  learned.SetColdStart(seconds(120));
  EXPECT_EQ(learned.options().cold_start, seconds(120));
  // The same ramp as above: with the measured 120 s the forecast runs ahead as if the policy
  // had been made with it.
  RatePolicy made_with(Plain(seconds(120)));
  Load a(learned);
  Load b(made_with);
  a.Run(300, 1.0);
  b.Run(300, 1.0);
  for (int t = 1; t <= 200; ++t) {
    const double rate = 1 + 0.02 * t;
    ASSERT_EQ(a.Run(1, rate).desired, b.Run(1, rate).desired) << t;
  }
  EXPECT_THAT(a.Run(1, 5.0).reason, HasSubstr("in 120s"));
}

// Feeds `policy` 4 req/s for 300 s, each request with `prompt_tokens` prompt tokens.
Decision RunWithPrompts(RatePolicy& policy, int64_t prompt_tokens) {
  Decision decision;
  TimePoint now = FakeClock::kDefaultStart;
  for (int second = 1; second <= 300; ++second) {
    now += seconds(1);
    LoadSample sample;
    sample.arrivals_total = 4 * second;
    sample.prompt_tokens_total = 4 * second * prompt_tokens;
    sample.answered_total = sample.arrivals_total;
    sample.ready_replicas = 4;
    decision = policy.Decide(sample, now);
  }
  return decision;
}

TEST(RatePolicy, PlanningInPromptTokensWeighsLongPromptsMore) {
  // Capacity 1 request/s of 700 tokens + 300 per request: 1,000 tokens/s per replica. Requests
  // of 1,700 prompt tokens weigh twice that, so the same 4 req/s wants twice the replicas.
  RateOptions options = Plain();
  options.plan_in_prompt_tokens = true;
  options.request_tokens = 300;
  options.initial_capacity = 1.0;
  RatePolicy reference(options);
  const double per_replica = 1.0 * (700 + 300);
  // A policy that learned nothing keeps the capacity it started from, in tokens.
  EXPECT_EQ(RunWithPrompts(reference, 700).desired, 4);
  EXPECT_NEAR(reference.capacity(), per_replica, 1e-6);

  // Then the prompts grow to 1,700 tokens: 4 x 2,000 tokens/s over 1,000 per replica.
  LoadSample sample;
  TimePoint now = FakeClock::kDefaultStart + seconds(300);
  int64_t tokens = 4 * 300 * 700;
  Decision decision;
  for (int second = 301; second <= 600; ++second) {
    now += seconds(1);
    tokens += 4 * 1700;
    sample.arrivals_total = 4 * second;
    sample.prompt_tokens_total = tokens;
    sample.answered_total = sample.arrivals_total;
    sample.ready_replicas = 8;
    decision = reference.Decide(sample, now);
  }
  EXPECT_EQ(decision.desired, 8);
  EXPECT_THAT(decision.reason, HasSubstr("2000 tokens/request"));

  // Planning in requests, the prompt length changes nothing.
  RatePolicy requests(Plain());
  EXPECT_EQ(RunWithPrompts(requests, 1700).desired, 4);
}

// Feeds `policy` 300 s of 6 req/s with the replicas it asks for, each busy prefilling
// `prefill_seconds` per request it carries; returns the last decision.
Decision RunWithBusyTime(RatePolicy& policy, double prefill_seconds) {
  TimePoint now = FakeClock::kDefaultStart;
  LoadSample sample;
  sample.ready_replicas = 1;
  double busy = 0;
  Decision decision;
  for (int second = 1; second <= 300; ++second) {
    now += seconds(1);
    sample.arrivals_total = 6 * second;
    sample.answered_total = sample.arrivals_total;
    // 6 req/s spread over the ready replicas keeps each busy 6 x prefill / ready of the time.
    busy += std::min(6 * prefill_seconds, static_cast<double>(sample.ready_replicas));
    sample.prefill_busy_seconds_total = busy;
    decision = policy.Decide(sample, now);
    sample.ready_replicas = std::max(decision.desired, 1);
  }
  return decision;
}

TEST(RatePolicy, MeasuresCapacityFromHowBusyTheReplicasArePrefilling) {
  // 0.25 s of prefill per request: a replica busy 75 % of the time carries 3 req/s, so 6 req/s
  // wants 2 replicas, whatever the learned estimate started from. Prompts twice as long (0.5 s
  // each) at the same rate make each replica twice as busy: 1.5 req/s each, 4 replicas.
  RateOptions options = Plain();
  options.target_busy_share = 0.75;
  RatePolicy short_prompts(options);
  Decision decision = RunWithBusyTime(short_prompts, 0.25);
  EXPECT_EQ(decision.desired, 2);
  EXPECT_NEAR(decision.capacity_per_replica, 3.0, 1e-6);
  EXPECT_THAT(decision.reason,
              HasSubstr("360 served in 90.0 replica-seconds busy prefilling: 3.00 req/s at 75%"));
  RatePolicy long_prompts(options);
  decision = RunWithBusyTime(long_prompts, 0.5);
  EXPECT_EQ(decision.desired, 4);
  EXPECT_NEAR(decision.capacity_per_replica, 1.5, 1e-6);

  // Off, or without busy time reported, the capacity is the learned one (1 req/s here).
  options.target_busy_share = 0;
  RatePolicy off(options);
  EXPECT_EQ(RunWithBusyTime(off, 0.25).desired, 6);
  RatePolicy unreported(Plain());
  Load load(unreported);
  EXPECT_EQ(load.Run(300, 6.0).desired, 6);
}

TEST(RatePolicy, MeasuresCapacityFromServedRequestsThroughABacklogAndAtLowRates) {
  // 300 s at 6 req/s, 0.25 s of prefill each: 3 req/s per replica at 75 % busy.
  RateOptions options = Plain();
  options.target_busy_share = 0.75;
  RatePolicy policy(options);
  ASSERT_NEAR(RunWithBusyTime(policy, 0.25).capacity_per_replica, 3.0, 1e-6);
  TimePoint now = FakeClock::kDefaultStart + seconds(300);
  LoadSample sample;
  sample.arrivals_total = 1800;
  sample.answered_total = 1800;
  sample.prefill_busy_seconds_total = 300 * 1.5;
  sample.ready_replicas = 2;
  // A backlog: arrivals fall to 0.5 req/s while the 2 replicas, busy all the time, serve 8 req/s
  // from the queue. The arrivals over the busy share would say 0.19 req/s per replica.
  Decision decision;
  for (int second = 1; second <= 90; ++second) {
    now += seconds(1);
    if (second % 2 == 0) ++sample.arrivals_total;
    sample.answered_total += 8;
    sample.prefill_busy_seconds_total += 2;
    sample.waiting = 200;
    decision = policy.Decide(sample, now);
  }
  EXPECT_NEAR(decision.capacity_per_replica, 3.0, 1e-6);
  // Then 0.3 req/s over 10 replicas, each busy 0.75 % of the time: still measured.
  sample.waiting = 0;
  sample.ready_replicas = 10;
  for (int second = 1; second <= 120; ++second) {
    now += seconds(1);
    if (second % 10 < 3) {
      ++sample.arrivals_total;
      ++sample.answered_total;
      sample.prefill_busy_seconds_total += 0.25;
    }
    decision = policy.Decide(sample, now);
  }
  EXPECT_NEAR(decision.capacity_per_replica, 3.0, 1e-6);
  // 0.3 req/s wants one replica; the second stays because the load left at once (from 6 req/s
  // to 0.5 within seconds: see HoldsReplicasThroughALullThatBeganWithAStep).
  EXPECT_EQ(decision.desired, 2);
  EXPECT_THAT(decision.reason, HasSubstr("keeping replica 2"));
}

TEST(RatePolicy, ScalesDownAfterTheDelayOneReplicaPerStep) {
  RateOptions options = Plain();
  options.scale_down_delay = seconds(120);
  options.scale_down_step = seconds(10);
  RatePolicy policy(options);
  Load load(policy);
  EXPECT_EQ(load.Run(300, 8.0).desired, 8);
  // The rate halves: nothing goes within the delay, then one replica at a time, at least a step
  // apart, down to what 4 req/s needs.
  std::vector<int> desired;
  for (int second = 0; second < 400; ++second) desired.push_back(load.Run(1, 4.0).desired);
  int last_step = -1000;
  for (int second = 1; second < 400; ++second) {
    if (second < 120) {
      EXPECT_EQ(desired[second], 8) << second;
    }
    ASSERT_GE(desired[second], desired[second - 1] - 1) << second;
    if (desired[second] < desired[second - 1]) {
      EXPECT_GE(second - last_step, 10) << second;
      last_step = second;
    }
  }
  EXPECT_EQ(desired.back(), 4);
}

// The fewest replicas `policy` wants over `seconds_long` seconds at `rate`, the last decision in
// `last`.
int FewestWanted(Load& load, int seconds_long, double rate, Decision& last) {
  int fewest = std::numeric_limits<int>::max();
  for (int second = 0; second < seconds_long; ++second) {
    last = load.Run(1, rate);
    fewest = std::min(fewest, last.desired);
  }
  return fewest;
}

// `seconds_long` decisions with the rate moving linearly from `from` to `to` req/s.
void Ramp(Load& load, int seconds_long, double from, double to) {
  for (int second = 1; second <= seconds_long; ++second) {
    load.Run(1, from + (to - from) * second / seconds_long);
  }
}

TEST(RatePolicy, KeepsReplicasThroughLullsThatEndedInSurprises) {
  // 4 req/s spells with lulls at 0.5 req/s between them, each lull reached by a decline over
  // 300 s (no step down) and each rise a step (1 req/s per replica, a 60 s cold start and
  // scale-down delay). The first lull gives the replicas back after the delay; the rise that
  // ends it wants them again while, half a cold start before, the rate wanted one, which could
  // not carry them even fully busy: surprises, so through the next lull (no longer than the
  // first) they stay. A lull longer than any seen before lets them go once it outlasts the
  // longest.
  RatePolicy policy(Plain());
  Load load(policy);
  Decision decision;
  load.Run(300, 4.0);
  Ramp(load, 300, 4.0, 0.5);
  EXPECT_EQ(FewestWanted(load, 400, 0.5, decision), 1);
  EXPECT_EQ(load.Run(300, 4.0).desired, 4);
  Ramp(load, 300, 4.0, 0.5);
  EXPECT_EQ(FewestWanted(load, 300, 0.5, decision), 4);
  EXPECT_THAT(decision.reason, HasSubstr("keeping replica 4: 1 of its last 1 spells unwanted "
                                         "came back as steps"));
  load.Run(300, 4.0);
  Ramp(load, 300, 4.0, 0.5);
  EXPECT_EQ(FewestWanted(load, 1500, 0.5, decision), 1);
}

TEST(RatePolicy, HoldsReplicasThroughALullThatBeganWithAStep) {
  // The load leaves at once: 4 req/s, then 0.5 req/s from one second to the next. Before any
  // return has been seen, a load that left as a step is expected to come back as one, and a
  // return found cold is late for a whole cold start: the replicas stay, for as long as a
  // return would cost (60 s + 58 s x 1 req/s late at 100 replica-seconds each: 5,860 s).
  RatePolicy stepped(Plain());
  Load load(stepped);
  Decision decision;
  load.Run(300, 4.0);
  EXPECT_EQ(FewestWanted(load, 3000, 0.5, decision), 4);
  EXPECT_THAT(decision.reason, HasSubstr("keeping replica 4: 1 of its last 1 spells unwanted "
                                         "began or came back as steps"));
  EXPECT_EQ(FewestWanted(load, 3000, 0.5, decision), 1);

  // The same fall spread over 300 s is a decline the forecast follows: the replicas go after
  // the scale-down delay, one per step.
  RatePolicy declined(Plain());
  Load slow(declined);
  slow.Run(300, 4.0);
  Ramp(slow, 300, 4.0, 0.5);
  EXPECT_EQ(FewestWanted(slow, 200, 0.5, decision), 1);
}

TEST(RatePolicy, GivesReplicasBackAfterTheDelayWhenRisesAreForecast) {
  // Lulls at 4.5 req/s, each rise a ramp to 9 req/s over 600 s: half a cold start before the
  // rate wants k replicas it wants k - 1, which carry k's load fully busy (k >= 4 at a 75 %
  // target), so no return is a surprise and every lull gives the replicas back after the delay.
  // (At 3 replicas or fewer one less is a third of the capacity or more: every return counts.)
  RatePolicy policy(Plain());
  Load load(policy);
  Decision decision;
  load.Run(300, 9.0);
  for (int spell = 0; spell < 3; ++spell) {
    EXPECT_EQ(FewestWanted(load, 400, 4.5, decision), 5) << spell;
    for (int second = 1; second <= 600; ++second) load.Run(1, 4.5 + 4.5 * second / 600);
    load.Run(300, 9.0);
  }
}

// Arrivals by `t`: 2 req/s, with bursts of 40 requests at 100.95 s and 110.85 s, which one
// 10 s burst window holds both only when it ends in [110.85 s, 110.95 s).
int64_t TwoBurstArrivals(Duration t) {
  const double at = ToSeconds(t);
  return static_cast<int64_t>(std::floor(2 * at)) + (at >= 100.95 ? 40 : 0) +
         (at >= 110.85 ? 40 : 0);
}

// The desired count at each whole second of 200 s of TwoBurstArrivals, asked every `pace`.
std::vector<int> DesiredEachSecond(const RateOptions& options, Duration pace) {
  RatePolicy policy(options);
  std::vector<int> desired;
  int ready = 1;
  for (Duration t = seconds(1); t <= seconds(200); t += pace) {
    LoadSample sample;
    sample.arrivals_total = TwoBurstArrivals(t);
    sample.answered_total = sample.arrivals_total;
    sample.ready_replicas = ready;
    const Decision decision = policy.Decide(sample, FakeClock::kDefaultStart + t);
    ready = std::max(1, decision.desired);
    if (t % seconds(1) == Duration::zero()) desired.push_back(decision.desired);
  }
  return desired;
}

TEST(RatePolicy, DecidesTheSameWhetherAskedEverySecondOrTenTimesASecond) {
  const std::vector<int> every_second = DesiredEachSecond(Plain(), seconds(1));
  ASSERT_EQ(every_second.size(), 200u);
  // Each whole-second window holds one burst: 60 requests in 10 s.
  EXPECT_EQ(*std::max_element(every_second.begin(), every_second.end()), 6);
  EXPECT_EQ(DesiredEachSecond(Plain(), std::chrono::milliseconds(100)), every_second);
  // Recording every sample, the window ending at 110.9 s holds both bursts: 100 requests.
  RateOptions eager = Plain();
  eager.rate_sample_period = std::chrono::milliseconds(100);
  const std::vector<int> eager_desired = DesiredEachSecond(eager, std::chrono::milliseconds(100));
  EXPECT_EQ(*std::max_element(eager_desired.begin(), eager_desired.end()), 10);
}

// Runs `load` idle until `policy`'s desired count is 0 or `most` seconds have passed; returns
// the idle seconds and sets `last` to the last decision.
int IdleSecondsToZero(Load& load, int most, Decision& last) {
  for (int idle = 1; idle <= most; ++idle) {
    last = load.Run(1, 0);
    if (last.desired == 0) return idle;
  }
  return most + 1;
}

TEST(RatePolicy, ScalesToZeroOnlyOnceTheForecastIdleGapPaysForAReturn) {
  // Capacity 1 req/s and a 30 s cold start: a return from zero at the 1 req/s seen before the
  // gap makes 28 requests late, each priced at the 100 replica-seconds that serve the requests
  // a 1 % budget allows one miss for, plus the cold start: 2,830 replica-seconds. With no gap
  // seen before, the spell so far is its own forecast, so the last replica goes after 2,830 s
  // idle, not after the 90 s idle period.
  RateOptions options = Plain(seconds(30));
  options.scale_to_zero_after = seconds(90);
  options.scale_down_delay = seconds(10);
  RatePolicy policy(options);
  Load load(policy);
  EXPECT_EQ(load.Run(60, 1.0).desired, 1);
  Decision decision = load.Run(80, 0);
  EXPECT_EQ(decision.desired, 1);
  EXPECT_THAT(decision.reason, HasSubstr("keeping 1 until idle for 90s"));
  decision = load.Run(1000, 0);
  EXPECT_EQ(decision.desired, 1);
  EXPECT_THAT(decision.reason,
              HasSubstr("keeping 1 while the idle gap is not forecast to pay for a return"));
  EXPECT_THAT(decision.reason, HasSubstr("costs 2830 replica-seconds: 30s cold start, 28 late"));
  const int idle = 1080 + IdleSecondsToZero(load, 3000, decision);
  EXPECT_GE(idle, 2830);
  EXPECT_LE(idle, 2840);
  EXPECT_THAT(decision.reason, HasSubstr("idle: scaling to zero"));

  // That gap comes back after 6,000 s; the next arrival asks for a replica at once. The next
  // gap is forecast to last 3,000 s more, which pays for a return, so the replica goes after
  // the idle period.
  load.Run(6000 - idle, 0);
  EXPECT_EQ(load.Run(1, 1.0).desired, 1);
  load.Run(59, 1.0);
  EXPECT_LE(IdleSecondsToZero(load, 3000, decision), 95);
}

TEST(RatePolicy, AQuieterServiceGoesToZeroSooner) {
  // At 0.1 req/s before the gap a return makes 2.8 requests late: 310 replica-seconds.
  RateOptions options = Plain(seconds(30));
  options.scale_to_zero_after = seconds(90);
  options.scale_down_delay = seconds(10);
  RatePolicy policy(options);
  Load load(policy);
  load.Run(120, 0.1);
  Decision decision;
  const int idle = IdleSecondsToZero(load, 3000, decision);
  EXPECT_GE(idle, 250);
  EXPECT_LE(idle, 320);
}

TEST(RatePolicy, RejectsBadOptionsNamingTheField) {
  RateOptions options = RateDefaults(seconds(82));
  EXPECT_TRUE(ValidateRateOptions(options).ok());
  options.headroom = -0.5;
  EXPECT_THAT(ValidateRateOptions(options).message(), HasSubstr("headroom"));
  options = RateDefaults(seconds(82));
  options.burst_window = Duration{0};
  EXPECT_THAT(ValidateRateOptions(options).message(), HasSubstr("burstWindow"));
  options = RateDefaults(seconds(82));
  options.initial_capacity = 0;
  EXPECT_THAT(ValidateRateOptions(options).message(), HasSubstr("initialCapacity"));
  options = RateDefaults(seconds(82));
  options.miss_budget = 1.5;
  EXPECT_THAT(ValidateRateOptions(options).message(), HasSubstr("missBudget"));
  options = RateDefaults(seconds(82));
  options.capacity_smoothing = 0;
  EXPECT_THAT(ValidateRateOptions(options).message(), HasSubstr("capacitySmoothing"));
  options = RateDefaults(seconds(82));
  options.request_tokens = 0;
  EXPECT_THAT(ValidateRateOptions(options).message(), HasSubstr("requestTokens"));
  options = RateDefaults(seconds(82));
  options.target_busy_share = 1;
  EXPECT_THAT(ValidateRateOptions(options).message(), HasSubstr("targetBusyShare"));
  options = RateDefaults(seconds(82));
  options.min_measured_requests = 0;
  EXPECT_THAT(ValidateRateOptions(options).message(), HasSubstr("minMeasuredRequests"));
}

}  // namespace
}  // namespace strata::autoscaler
