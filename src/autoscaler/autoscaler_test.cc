#include "autoscaler/autoscaler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autoscaler/keda_policy.h"
#include "autoscaler/rate_policy.h"
#include "autoscaler/windowed_policy.h"

namespace strata::autoscaler {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

const TargetKey kChat{"chat", "v1"};

LoadSample Load(int64_t load, int ready) {
  LoadSample sample;
  sample.waiting = load;
  sample.ready_replicas = ready;
  return sample;
}

// Runs the autoscaler's loop every 500 ms: a load of 10 for just over two minutes (the step
// comes right after a 30 s poll), then a step to 60. Returns how long after the step the desired
// count first rose.
Duration ReactionTime(std::unique_ptr<ScalingPolicy> policy) {
  FakeClock clock;
  metrics::Registry registry;
  Autoscaler autoscaler(clock, registry);
  EXPECT_TRUE(autoscaler.AddTarget(kChat, std::move(policy)).ok());
  for (int i = 0; i < 241; ++i) {
    clock.Advance(milliseconds(500));
    EXPECT_EQ(autoscaler.Evaluate(kChat, Load(10, 1))->desired, 1);
  }
  const TimePoint step = clock.Now();
  while (clock.Now() - step < seconds(120)) {
    clock.Advance(milliseconds(500));
    if (autoscaler.Evaluate(kChat, Load(60, 1))->desired > 1) return clock.Now() - step;
  }
  return seconds(120);
}

TEST(Autoscaler, ALoadStepReachesADecisionWithinOneSecond) {
  // strata asks for the capacity that drains the queued requests: 10 waiting fit one replica,
  // 60 do not.
  EXPECT_LT(ReactionTime(std::make_unique<RatePolicy>(RateDefaults(seconds(82)))), seconds(1));
  // The same step through KEDA's 30 s polling (one waiting request per replica is its target
  // here) waits for the next poll.
  KedaOptions keda;
  keda.target_waiting = 12;
  EXPECT_GE(ReactionTime(std::make_unique<KedaPolicy>(keda)), seconds(29));
}

TEST(Autoscaler, ExportsDesiredAndActualReplicasAndSignals) {
  FakeClock clock;
  metrics::Registry registry;
  Autoscaler autoscaler(clock, registry);
  WindowedOptions options = KnativeDefaults();
  options.target_load = 10;
  ASSERT_TRUE(autoscaler.AddTarget(kChat, std::make_unique<WindowedPolicy>(options)).ok());
  LoadSample sample = Load(35, 2);
  sample.gateway_queued = 5;
  sample.kv_usage = 0.25;
  sample.starting_replicas = 1;
  ASSERT_EQ(autoscaler.Evaluate(kChat, sample)->desired, 4);
  const std::string text = registry.RenderText();
  EXPECT_THAT(text,
              HasSubstr("strata_autoscaler_desired_replicas{service=\"chat\",version=\"v1\"} 4\n"));
  EXPECT_THAT(text,
              HasSubstr("strata_autoscaler_ready_replicas{service=\"chat\",version=\"v1\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("strata_autoscaler_load_requests{service=\"chat\",version=\"v1\"} "
                              "40\n"));
  EXPECT_THAT(text, HasSubstr("strata_autoscaler_gateway_queued_requests{service=\"chat\","
                              "version=\"v1\"} 5\n"));
  EXPECT_THAT(text, HasSubstr("strata_autoscaler_scale_decisions_total{service=\"chat\","
                              "version=\"v1\",direction=\"up\"} 1\n"));
  const Decision* last = autoscaler.LastDecision(kChat);
  ASSERT_NE(last, nullptr);
  EXPECT_THAT(last->reason, HasSubstr("-> 4 replicas"));

  ASSERT_TRUE(autoscaler.RemoveTarget(kChat).ok());
  EXPECT_THAT(registry.RenderText(), ::testing::Not(HasSubstr("service=\"chat\"")));
}

TEST(Autoscaler, ExportsTheRateSignalsAndTheReasonOfStratasDecisions) {
  FakeClock clock;
  metrics::Registry registry;
  Autoscaler autoscaler(clock, registry);
  RateOptions options = RateDefaults(seconds(30));
  options.burst_sigmas = 0;
  ASSERT_TRUE(autoscaler.AddTarget(kChat, std::make_unique<RatePolicy>(options)).ok());
  LoadSample sample = Load(0, 1);
  for (int second = 1; second <= 60; ++second) {
    clock.Advance(seconds(1));
    sample.arrivals_total += 3;
    ASSERT_TRUE(autoscaler.Evaluate(kChat, sample).has_value());
  }
  // 3 req/s at the initial 1 req/s per replica.
  const std::string text = registry.RenderText();
  EXPECT_THAT(text,
              HasSubstr("strata_autoscaler_desired_replicas{service=\"chat\",version=\"v1\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("strata_autoscaler_arrival_rate_requests_per_second{service=\"chat\","
                              "version=\"v1\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("strata_autoscaler_provisioned_rate_requests_per_second{service="
                              "\"chat\",version=\"v1\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("strata_autoscaler_replica_capacity_requests_per_second{service="
                              "\"chat\",version=\"v1\"} 1\n"));
  const Decision* last = autoscaler.LastDecision(kChat);
  ASSERT_NE(last, nullptr);
  EXPECT_THAT(last->reason, HasSubstr("arrivals 3.00 req/s over 10s"));
  EXPECT_THAT(last->reason, HasSubstr("at 1.00 req/s per replica wants 3 -> 3 replicas"));
}

TEST(Autoscaler, UnknownAndDuplicateTargetsAreErrors) {
  FakeClock clock;
  metrics::Registry registry;
  Autoscaler autoscaler(clock, registry);
  EXPECT_EQ(autoscaler.Evaluate(kChat, Load(1, 1)).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(autoscaler.LastDecision(kChat), nullptr);
  ASSERT_TRUE(autoscaler.AddTarget(kChat, std::make_unique<FixedPolicy>(3)).ok());
  EXPECT_EQ(autoscaler.AddTarget(kChat, std::make_unique<FixedPolicy>(3)).code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(autoscaler.RemoveTarget({"chat", "v2"}).code(), StatusCode::kNotFound);
  EXPECT_EQ(autoscaler.SetColdStart({"chat", "v2"}, seconds(5)).code(), StatusCode::kNotFound);
  EXPECT_EQ(autoscaler.SetColdStart(kChat, seconds(-1)).code(), StatusCode::kInvalidArgument);
}

TEST(Autoscaler, AMeasuredColdStartReachesThePolicy) {
  FakeClock clock;
  metrics::Registry registry;
  Autoscaler autoscaler(clock, registry);
  ASSERT_TRUE(
      autoscaler.AddTarget(kChat, std::make_unique<RatePolicy>(RateDefaults(seconds(82)))).ok());
  ASSERT_TRUE(autoscaler.SetColdStart(kChat, seconds(294)).ok());
  clock.Advance(seconds(1));
  LoadSample sample = Load(0, 1);
  sample.arrivals_total = 1;
  EXPECT_THAT(autoscaler.Evaluate(kChat, sample)->reason, HasSubstr("in 294s"));
  // A policy that does not look ahead takes it and carries on.
  ASSERT_TRUE(autoscaler.AddTarget({"chat", "v2"}, std::make_unique<FixedPolicy>(2)).ok());
  EXPECT_TRUE(autoscaler.SetColdStart({"chat", "v2"}, seconds(294)).ok());
  EXPECT_EQ(autoscaler.Evaluate({"chat", "v2"}, sample)->desired, 2);
}

}  // namespace
}  // namespace strata::autoscaler
