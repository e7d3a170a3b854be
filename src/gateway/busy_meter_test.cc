#include "gateway/busy_meter.h"

#include <gtest/gtest.h>

namespace strata::gateway {
namespace {

using std::chrono::seconds;

TEST(BusyMeter, OverlappingWaitsCountOnce) {
  const TimePoint t0 = FakeClock::kDefaultStart;
  BusyMeter meter;
  EXPECT_EQ(meter.OpenFor(t0), Duration{0});
  meter.Open(t0);               // a waits from 0 s
  meter.Open(t0 + seconds(1));  // b waits from 1 s
  EXPECT_EQ(meter.OpenFor(t0 + seconds(2)), seconds(2));
  EXPECT_EQ(meter.Close(t0 + seconds(2)), Duration{0});  // a's first token: b still waits
  EXPECT_EQ(meter.Close(t0 + seconds(3)), seconds(3));   // b's: the spell 0-3 s ends
  EXPECT_EQ(meter.OpenFor(t0 + seconds(5)), Duration{0});
  meter.Open(t0 + seconds(5));
  EXPECT_EQ(meter.Close(t0 + seconds(6)), seconds(1));
}

}  // namespace
}  // namespace strata::gateway
