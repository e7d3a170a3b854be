// NvmlGpuMonitor against the fake libnvidia-ml.so.1 (src/node/fake_nvml_library.cc): every
// figure comes from a real dlopen'ed library through the same calls the driver answers.

#include <gtest/gtest.h>

#include <cmath>

#include "node/gpu_metrics.h"

namespace strata::node {
namespace {

TEST(NvmlGpuMonitorTest, ReadsEveryFigureOfEveryGpu) {
  Result<std::unique_ptr<NvmlGpuMonitor>> monitor = NvmlGpuMonitor::Open(STRATA_FAKE_NVML_PATH);
  ASSERT_TRUE(monitor) << monitor.error().ToString();
  Result<observe::GpuReadingsByUuid> readings = (*monitor)->Read();
  ASSERT_TRUE(readings) << readings.error().ToString();
  ASSERT_EQ(readings->size(), 8u);

  const observe::GpuReading& gpu3 = readings->at("GPU-fake-3");
  EXPECT_EQ(gpu3.utilization_percent, 30);
  EXPECT_EQ(gpu3.fb_used_mib, 3 * 1024);
  EXPECT_EQ(gpu3.fb_free_mib, 81559 - 3 * 1024);
  EXPECT_EQ(gpu3.power_watts, 103);
  EXPECT_EQ(gpu3.temperature_celsius, 43);
  EXPECT_EQ(gpu3.sm_clock_mhz, 1977);
  EXPECT_EQ(gpu3.ecc_sbe_volatile, 0);
  EXPECT_EQ(gpu3.last_xid, 0);

  const observe::GpuReading& gpu2 = readings->at("GPU-fake-2");
  EXPECT_EQ(gpu2.ecc_sbe_volatile, 3);
  EXPECT_EQ(gpu2.ecc_dbe_volatile, 1);
  // A GPU without ECC counters leaves them unknown instead of reporting zero errors.
  EXPECT_TRUE(std::isnan(readings->at("GPU-fake-7").ecc_sbe_volatile));
  EXPECT_EQ(readings->at("GPU-fake-7").utilization_percent, 70);
}

TEST(NvmlGpuMonitorTest, AnXidEventIsTheGpusLastXidFromThenOn) {
  Result<std::unique_ptr<NvmlGpuMonitor>> monitor = NvmlGpuMonitor::Open(STRATA_FAKE_NVML_PATH);
  ASSERT_TRUE(monitor) << monitor.error().ToString();
  for (int read = 0; read < 2; ++read) {
    Result<observe::GpuReadingsByUuid> readings = (*monitor)->Read();
    ASSERT_TRUE(readings) << readings.error().ToString();
    EXPECT_EQ(readings->at("GPU-fake-6").last_xid, 79) << "read " << read;
    EXPECT_EQ(readings->at("GPU-fake-5").last_xid, 0) << "read " << read;
  }
}

TEST(NvmlGpuMonitorTest, AMissingLibraryIsUnavailableWithTheLoadersWords) {
  Result<std::unique_ptr<NvmlGpuMonitor>> monitor =
      NvmlGpuMonitor::Open("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(monitor);
  EXPECT_EQ(monitor.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(monitor.error().message().find("NVML not loaded"), std::string::npos);
}

}  // namespace
}  // namespace strata::node
