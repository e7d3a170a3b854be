#include "engine/step_pacer.h"

#include <gtest/gtest.h>

namespace strata::engine {
namespace {

using std::chrono::milliseconds;

TEST(StepPacerTest, EngineTimeRunsTimeScaleTimesFaster) {
  FakeClock clock;
  StepPacer pacer(clock.Now(), 4.0);
  clock.Advance(milliseconds(10));
  EXPECT_EQ(pacer.EngineTime(clock.Now()), FakeClock::kDefaultStart + milliseconds(40));
  EXPECT_EQ(pacer.RealTime(FakeClock::kDefaultStart + milliseconds(40)), clock.Now());
}

TEST(StepPacerTest, ALateDeliveryDoesNotDelayTheStepsAfterIt) {
  FakeClock clock;
  const TimePoint origin = clock.Now();
  StepPacer pacer(origin, 2.0);
  // Step 1: 20 ms of engine time, due 10 ms of real time later.
  TimePoint start = pacer.NextStart(clock.Now());
  EXPECT_EQ(start, origin);
  EXPECT_EQ(pacer.Began(start, milliseconds(20)), origin + milliseconds(10));
  // The timer fires 3 ms late.
  clock.Advance(milliseconds(13));
  EXPECT_EQ(pacer.Delivered(clock.Now(), /*more_work=*/true), milliseconds(3));
  // Step 2 starts where step 1 ended in the model, not where the late wake-up left it, and is
  // due at its modelled end: 10 + 12 / 2 ms of real time, not 13 + 6.
  start = pacer.NextStart(clock.Now());
  EXPECT_EQ(start, origin + milliseconds(20));
  EXPECT_EQ(pacer.Began(start, milliseconds(12)), origin + milliseconds(16));
  clock.Advance(milliseconds(3));
  EXPECT_EQ(pacer.Delivered(clock.Now(), true), Duration{0});
  EXPECT_EQ(pacer.NextStart(clock.Now()), origin + milliseconds(32));
}

TEST(StepPacerTest, AfterAnIdleEngineTheNextStepStartsNow) {
  FakeClock clock;
  const TimePoint origin = clock.Now();
  StepPacer pacer(origin, 2.0);
  pacer.Began(pacer.NextStart(clock.Now()), milliseconds(20));
  clock.Advance(milliseconds(10));
  pacer.Delivered(clock.Now(), /*more_work=*/false);
  clock.Advance(milliseconds(50));  // the next request comes later
  EXPECT_EQ(pacer.NextStart(clock.Now()), origin + milliseconds(120));
}

}  // namespace
}  // namespace strata::engine
