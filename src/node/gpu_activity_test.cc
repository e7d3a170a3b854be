#include "node/gpu_activity.h"

#include <gtest/gtest.h>

namespace strata::node {
namespace {

using namespace std::chrono_literals;

TEST(GpuBusyShareTest, OneCorePerGpuIsFullyBusyAndLessIsItsFraction) {
  EXPECT_DOUBLE_EQ(GpuBusyShare(10s, 10s, 1), 1.0);
  EXPECT_DOUBLE_EQ(GpuBusyShare(10s, 10s, 2), 0.5);
  EXPECT_DOUBLE_EQ(GpuBusyShare(40s, 10s, 4), 1.0);
  // A half GPU is saturated by half a core; more cores than GPUs cap at fully busy.
  EXPECT_DOUBLE_EQ(GpuBusyShare(5s, 10s, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(GpuBusyShare(30s, 10s, 1), 1.0);
  EXPECT_DOUBLE_EQ(GpuBusyShare(100ms, 10s, 1), 0.01);
}

TEST(GpuBusyShareTest, NothingElapsedNoGpuOrCpuTimeGoingBackIsIdle) {
  EXPECT_EQ(GpuBusyShare(1s, 0s, 1), 0);
  EXPECT_EQ(GpuBusyShare(1s, 10s, 0), 0);
  EXPECT_EQ(GpuBusyShare(-3s, 10s, 1), 0);
}

TEST(GpuActivityWorthRecordingTest, OnlyTheFirstShareAndStepsOfATenthAreWritten) {
  EXPECT_TRUE(GpuActivityWorthRecording(std::nullopt, 0.0));
  EXPECT_FALSE(GpuActivityWorthRecording(0.92, 0.85));
  EXPECT_TRUE(GpuActivityWorthRecording(0.92, 0.02));
  EXPECT_TRUE(GpuActivityWorthRecording(0.25, 0.35));
  EXPECT_FALSE(GpuActivityWorthRecording(0.0, 0.05));
}

TEST(GpuActivityMeterTest, TheFirstReadingBeginsAWindowAndEachLaterOneEndsOne) {
  GpuActivityMeter meter(30s);
  TimePoint t0{};
  EXPECT_TRUE(meter.Due("p", t0));
  EXPECT_EQ(meter.Record("p", 5s, 2, t0), std::nullopt);
  EXPECT_FALSE(meter.Due("p", t0 + 29s));
  ASSERT_TRUE(meter.Due("p", t0 + 30s));
  // 30 s of CPU over 30 s on 2 GPUs: one core for two GPUs.
  EXPECT_EQ(meter.Record("p", 35s, 2, t0 + 30s), 0.5);
  // The next window starts where the last one ended.
  EXPECT_EQ(meter.Record("p", 35s, 2, t0 + 60s), 0.0);
}

TEST(GpuActivityMeterTest, PodsNotRetainedStartOver) {
  GpuActivityMeter meter(10s);
  TimePoint t0{};
  meter.Record("gone", 0s, 1, t0);
  meter.Record("kept", 0s, 1, t0);
  meter.Retain({"kept"});
  EXPECT_EQ(meter.Record("gone", 10s, 1, t0 + 10s), std::nullopt);
  EXPECT_EQ(meter.Record("kept", 10s, 1, t0 + 10s), 1.0);
}

}  // namespace
}  // namespace strata::node
