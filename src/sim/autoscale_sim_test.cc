#include "sim/autoscale_sim.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/profile.h"

namespace strata::sim {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

TraceRequest Request(Duration arrival, uint64_t key) {
  TraceRequest request;
  request.arrival = arrival;
  request.input_tokens = 100;
  request.output_tokens = 10;
  request.block_tokens = 100;
  request.block_keys = {key};
  return request;
}

AutoscaleSimOptions Options(AutoscalePolicy policy) {
  AutoscaleSimOptions options;
  options.engine.profile = *engine::ProfileByName("8b-h100");
  options.policy = policy;
  options.cold_start = seconds(30);
  return options;
}

// Ten requests in the first ten seconds, then silence until 600 s, when two more come 10 s
// apart: the service scales to zero after the idle period, and the gateway holds the late
// requests while the first replica starts.
std::vector<TraceRequest> IdleGapTrace() {
  std::vector<TraceRequest> trace;
  for (int i = 0; i < 10; ++i) trace.push_back(Request(seconds(i), i));
  trace.push_back(Request(seconds(600), 10));
  trace.push_back(Request(seconds(610), 11));
  return trace;
}

TEST(AutoscaleSim, ScalesToZeroAndTheGatewayHoldsRequestsThroughTheColdStart) {
  const Result<AutoscaleSimReport> report =
      RunAutoscaleSim(IdleGapTrace(), Options(AutoscalePolicy::kKpa));
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->requests, 12u);
  EXPECT_EQ(report->completed, 12u);
  EXPECT_EQ(report->rejected, 0u);
  EXPECT_EQ(report->initial_replicas, 1);
  EXPECT_EQ(report->peak_replicas, 1);
  EXPECT_EQ(report->scale_downs, 1);  // to zero, once idle for 90 s
  EXPECT_EQ(report->scale_ups, 1);    // at 600 s, the first held request's second
  EXPECT_EQ(report->held_requests, 2u);
  EXPECT_DOUBLE_EQ(report->held_wait_max, 30.0);  // held from 600 s until ready at 630 s
  EXPECT_EQ(report->during_scale_up, 1u);         // the one at 610 s
  // The two held requests miss the 2 s TTFT objective; the first ten make it.
  EXPECT_DOUBLE_EQ(report->slo_attainment, 10.0 / 12.0);
  // One replica from 0 s to ~100 s (scale to zero), one from 600 s to ~630 s.
  EXPECT_NEAR(report->gpu_hours, (100.0 + 30.0) / 3600, 3.0 / 3600);
  // Minute by minute: the first holds one ready replica and the ten requests, the sixth nothing,
  // the eleventh (600-660 s) the two held requests, both late.
  ASSERT_EQ(report->minutes.size(), 11u);
  EXPECT_EQ(report->minutes[0].arrivals, 10);
  EXPECT_EQ(report->minutes[0].late, 0);
  EXPECT_DOUBLE_EQ(report->minutes[0].replicas_paid, 1.0);
  EXPECT_DOUBLE_EQ(report->minutes[0].replicas_ready, 1.0);
  EXPECT_EQ(report->minutes[5].arrivals, 0);
  EXPECT_DOUBLE_EQ(report->minutes[5].replicas_paid, 0.0);
  EXPECT_EQ(report->minutes[10].arrivals, 2);
  EXPECT_EQ(report->minutes[10].late, 2);
  EXPECT_EQ(report->minutes[10].desired, 1);
}

TEST(AutoscaleSim, TheActivatorAnswers503WhenTheWaitIsTooLong) {
  AutoscaleSimOptions options = Options(AutoscalePolicy::kKpa);
  options.activator_timeout = seconds(26);  // expiry falls on one of Knative's 2 s ticks
  const Result<AutoscaleSimReport> report = RunAutoscaleSim(IdleGapTrace(), options);
  ASSERT_TRUE(report.has_value());
  // The 600 s request times out at 626 s; the 610 s one is routed when the replica is ready
  // at 630 s.
  EXPECT_EQ(report->rejected, 1u);
  EXPECT_EQ(report->completed, 11u);
  EXPECT_DOUBLE_EQ(report->held_wait_max, 26.0);  // the one that timed out
  EXPECT_DOUBLE_EQ(report->slo_attainment, 10.0 / 12.0);
}

TEST(AutoscaleSim, StaticPeakHoldsThePeakMinutesReplicasThroughout) {
  // A quiet minute, then a minute at 40 req/s, then a quiet minute.
  std::vector<TraceRequest> trace;
  for (int i = 0; i < 60; ++i) trace.push_back(Request(seconds(i), trace.size()));
  for (int i = 0; i < 2400; ++i) {
    trace.push_back(Request(seconds(60) + std::chrono::milliseconds(25) * i, trace.size()));
  }
  for (int i = 0; i < 60; ++i) trace.push_back(Request(seconds(120 + i), trace.size()));
  const AutoscaleSimOptions options = Options(AutoscalePolicy::kStaticPeak);
  const Result<int> peak = PeakMinuteReplicas(trace, options);
  ASSERT_TRUE(peak.has_value());
  EXPECT_GT(*peak, 1);
  const Result<AutoscaleSimReport> report = RunAutoscaleSim(trace, options);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->initial_replicas, *peak);
  EXPECT_EQ(report->peak_replicas, *peak);
  EXPECT_EQ(report->scale_ups + report->scale_downs, 0);
  EXPECT_GE(report->slo_attainment, 0.99);
  // Fewer replicas than the peak's lose requests in the busy minute.
  const Result<AutoscaleSimReport> autoscaled =
      RunAutoscaleSim(trace, Options(AutoscalePolicy::kKeda));
  ASSERT_TRUE(autoscaled.has_value());
  EXPECT_LT(autoscaled->slo_attainment, report->slo_attainment);
  // A count given holds that many instead, and one replica loses requests in the busy minute.
  AutoscaleSimOptions one = options;
  one.static_replicas = 1;
  const Result<AutoscaleSimReport> single = RunAutoscaleSim(trace, one);
  ASSERT_TRUE(single.has_value());
  EXPECT_EQ(single->initial_replicas, 1);
  EXPECT_EQ(single->peak_replicas, 1);
  EXPECT_LT(single->slo_attainment, 0.99);
}

// Requests of 2,000 prompt tokens (~0.5 s of prefill each) at `rate(t)` req/s for `minutes`,
// evenly spaced.
template <typename Rate>
std::vector<TraceRequest> LongPromptTrace(int minutes, Rate rate) {
  std::vector<TraceRequest> trace;
  double t = 0;
  while (t < minutes * 60.0) {
    TraceRequest request = Request(
        std::chrono::duration_cast<Duration>(std::chrono::duration<double>(t)), trace.size());
    request.input_tokens = 2000;
    request.output_tokens = 50;
    request.block_tokens = 2000;
    trace.push_back(request);
    t += 1.0 / rate(t);
  }
  return trace;
}

TEST(AutoscaleSim, StrataFollowsARampWithinTheSloOnFewerGpuHoursThanThePeak) {
  // 1 req/s, rising to 4 req/s over ten minutes, then back to 1 over ten minutes: long enough
  // for the smoothed capacity estimate to move from its conservative start.
  const std::vector<TraceRequest> trace = LongPromptTrace(
      20, [](double t) { return t < 600 ? 1 + 3 * t / 600 : 4 - 3 * (t - 600) / 600; });
  const Result<AutoscaleSimReport> strata =
      RunAutoscaleSim(trace, Options(AutoscalePolicy::kStrata));
  const Result<AutoscaleSimReport> peak =
      RunAutoscaleSim(trace, Options(AutoscalePolicy::kStaticPeak));
  const Result<AutoscaleSimReport> kpa = RunAutoscaleSim(trace, Options(AutoscalePolicy::kKpa));
  ASSERT_TRUE(strata.has_value() && peak.has_value() && kpa.has_value());
  EXPECT_GE(strata->slo_attainment, 0.99);
  EXPECT_LT(strata->gpu_hours, peak->gpu_hours);
  EXPECT_GE(strata->slo_attainment, kpa->slo_attainment)
      << "kpa: " << kpa->slo_attainment << " in SLO on " << kpa->gpu_hours << " GPU-hours";
  EXPECT_GT(strata->scale_ups, 0);
  EXPECT_GT(strata->scale_downs, 0);
  // The capacity was learned from the signals, away from the initial 1 req/s per replica.
  EXPECT_NE(strata->learned_capacity, 1.0);
  EXPECT_GT(strata->learned_capacity, 0);
  EXPECT_EQ(peak->learned_capacity, 0);
}

TEST(AutoscaleSim, EveryPolicyStartsWithWhatTheFirstColdStartNeeds) {
  // A quiet first minute, then four times the load: no policy can add a replica before one
  // cold start has passed, so the start covers the busier second minute when the cold start
  // spans it, and only the first minute when it does not.
  const std::vector<TraceRequest> trace =
      LongPromptTrace(2, [](double t) { return t < 60 ? 1.0 : 4.0; });
  AutoscaleSimOptions short_start = Options(AutoscalePolicy::kKpa);
  short_start.cold_start = seconds(30);
  AutoscaleSimOptions long_start = Options(AutoscalePolicy::kKpa);
  long_start.cold_start = seconds(120);
  const Result<AutoscaleSimReport> quiet = RunAutoscaleSim(trace, short_start);
  const Result<AutoscaleSimReport> busy = RunAutoscaleSim(trace, long_start);
  ASSERT_TRUE(quiet.has_value() && busy.has_value());
  EXPECT_GT(busy->initial_replicas, quiet->initial_replicas);
}

TEST(AutoscaleSim, StrataScalesToZeroAndBack) {
  const Result<AutoscaleSimReport> report =
      RunAutoscaleSim(IdleGapTrace(), Options(AutoscalePolicy::kStrata));
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->completed, 12u);
  EXPECT_EQ(report->held_requests, 2u);  // no replica was left when they came
  EXPECT_DOUBLE_EQ(report->held_wait_max, 30.0);
}

TEST(AutoscaleSim, StrataKeepsAReplicaThroughIdleGapsWhenBurstsComeBack) {
  // Six bursts of 30 s at 2 req/s, 200 s of silence between them. Going to zero after each
  // 90 s idle period would leave the first 28 s of every burst late (a 30 s cold start); a
  // return costs far more than holding one replica through 200 s.
  std::vector<TraceRequest> trace;
  uint64_t key = 0;
  for (int burst = 0; burst < 6; ++burst) {
    for (int i = 0; i < 60; ++i) {
      trace.push_back(Request(seconds(burst * 230) + std::chrono::milliseconds(500 * i), key++));
    }
  }
  const Result<AutoscaleSimReport> report =
      RunAutoscaleSim(trace, Options(AutoscalePolicy::kStrata));
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->held_requests, 0u);
  EXPECT_DOUBLE_EQ(report->slo_attainment, 1.0);
  for (const AutoscaleMinute& minute : report->minutes) EXPECT_GE(minute.replicas_ready, 1.0);
}

TEST(AutoscaleSim, RejectsBadInputNamingIt) {
  EXPECT_THAT(RunAutoscaleSim({}, Options(AutoscalePolicy::kStrata)).error().message(),
              HasSubstr("trace"));
  AutoscaleSimOptions options = Options(AutoscalePolicy::kStrata);
  options.max_replicas = 0;
  EXPECT_THAT(RunAutoscaleSim(IdleGapTrace(), options).error().message(),
              HasSubstr("max_replicas"));
  EXPECT_THAT(ParseAutoscalePolicy("hpa").error().message(), HasSubstr("strata, kpa, keda"));
  options = Options(AutoscalePolicy::kStrata);
  options.headroom = -1;
  EXPECT_THAT(RunAutoscaleSim(IdleGapTrace(), options).error().message(), HasSubstr("headroom"));
  options = Options(AutoscalePolicy::kStaticPeak);
  options.static_replicas = options.max_replicas + 1;
  EXPECT_THAT(RunAutoscaleSim(IdleGapTrace(), options).error().message(),
              HasSubstr("static_replicas"));
  options = Options(AutoscalePolicy::kStrata);
  options.target_busy_share = 1;
  EXPECT_THAT(RunAutoscaleSim(IdleGapTrace(), options).error().message(),
              HasSubstr("target_busy_share"));
}

}  // namespace
}  // namespace strata::sim
