#include "autoscaler/keda_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::autoscaler {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

LoadSample Waiting(int64_t waiting, int ready) {
  LoadSample sample;
  sample.waiting = waiting;
  sample.running = 50;  // KEDA's trigger here is waiting requests only
  sample.ready_replicas = ready;
  return sample;
}

TEST(KedaPolicy, ReadsTheMetricOncePerPollingInterval) {
  KedaPolicy policy{KedaOptions{}};
  const TimePoint start = FakeClock::kDefaultStart;
  EXPECT_EQ(policy.Decide(Waiting(20, 1), start).desired, 4);
  // A burst right after the poll is invisible for 30 s.
  for (int t = 1; t < 30; ++t) {
    EXPECT_EQ(policy.Decide(Waiting(100, 4), start + seconds(t)).desired, 4) << t;
  }
  Decision decision = policy.Decide(Waiting(100, 4), start + seconds(30));
  EXPECT_EQ(decision.desired, 8);  // wants 20; the HPA adds at most max(100 %, 4 pods)
  EXPECT_THAT(decision.reason, HasSubstr("scale-up limit 8"));
}

TEST(KedaPolicy, IgnoresChangesWithinTheTolerance) {
  KedaPolicy policy{KedaOptions{}};
  EXPECT_EQ(policy.Decide(Waiting(52, 10), FakeClock::kDefaultStart).desired, 10);  // wants 11
}

TEST(KedaPolicy, ScaleDownWaitsForTheStabilisationWindow) {
  KedaPolicy policy{KedaOptions{}};
  const TimePoint start = FakeClock::kDefaultStart;
  EXPECT_EQ(policy.Decide(Waiting(40, 8), start).desired, 8);
  // One waiting request wants 1 replica, but the last 300 s recommended 8.
  for (int t = 30; t <= 300; t += 30) {
    EXPECT_EQ(policy.Decide(Waiting(1, 8), start + seconds(t)).desired, 8) << t;
  }
  Decision decision = policy.Decide(Waiting(1, 8), start + seconds(330));
  EXPECT_EQ(decision.desired, 1);
}

TEST(KedaPolicy, ActivatesFromZeroAndScalesToZeroAfterTheCooldown) {
  KedaPolicy policy{KedaOptions{}};
  const TimePoint start = FakeClock::kDefaultStart;
  EXPECT_EQ(policy.Decide(Waiting(0, 0), start).desired, 0);
  EXPECT_EQ(policy.Decide(Waiting(3, 0), start + seconds(30)).desired, 1);
  EXPECT_EQ(policy.Decide(Waiting(2, 1), start + seconds(60)).desired, 1);
  // Inactive from 90 s on: KEDA's 300 s cooldown runs from the last active poll (60 s).
  for (int t = 90; t < 360; t += 30) {
    EXPECT_EQ(policy.Decide(Waiting(0, 1), start + seconds(t)).desired, 1) << t;
  }
  Decision decision = policy.Decide(Waiting(0, 1), start + seconds(360));
  EXPECT_EQ(decision.desired, 0);
  EXPECT_THAT(decision.reason, HasSubstr("scaling to zero"));
}

TEST(KedaPolicy, RejectsBadOptionsNamingTheField) {
  KedaOptions options;
  options.polling_interval = Duration{0};
  EXPECT_THAT(ValidateKedaOptions(options).message(), HasSubstr("pollingInterval"));
  options = KedaOptions{};
  options.target_waiting = -1;
  EXPECT_THAT(ValidateKedaOptions(options).message(), HasSubstr("targetWaiting"));
}

}  // namespace
}  // namespace strata::autoscaler
