#include "observe/gpu_top.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "observe/test_cluster.h"

namespace strata::observe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(GpuTopTest, EachGpuWithItsHoldersAllocationAndUse) {
  ClusterObjects cluster;
  cluster.nodes = testing::SharedNodes({testing::GpuNode("sim-0", 3, true)});
  cluster.pods =
      testing::SharedPods({{testing::BoundPod("train-0", "sim-0", {0}, "Running"), {}},
                           {testing::BoundPod("half-a", "sim-0", {1}, "Running", 500), {}},
                           {testing::BoundPod("half-b", "sim-0", {1}, "Pending", 500), {}}});
  std::vector<std::vector<std::string>> rows = GpuTopRows(ClusterGpuSamples(cluster, {}));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_THAT(rows[0], ElementsAre("sim-0", "0", "H100-80GB", "100%", "92%", "default/train-0"));
  // Two half shares fill the GPU; the one that has not started yet keeps nothing busy.
  EXPECT_THAT(rows[1], ElementsAre("sim-0", "1", "H100-80GB", "100%", "46%",
                                   "default/half-a,default/half-b"));
  EXPECT_THAT(rows[2], ElementsAre("sim-0", "2", "H100-80GB", "0%", "0%", "-"));
  EXPECT_EQ(GpuTopHeader().size(), rows[0].size());
}

TEST(GpuTopTest, MeasuredGpusShowTheUtilisationTheMetricsPageReports) {
  std::string page =
      "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-host-0\",Hostname=\"host\"} 37\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"GPU-host-1\",Hostname=\"host\"} 100\n";
  Result<GpuReadingsByUuid> readings = UtilisationFromMetrics(page);
  ASSERT_TRUE(readings) << readings.error().ToString();
  ASSERT_EQ(readings->size(), 1u);
  ClusterObjects cluster;
  cluster.nodes = testing::SharedNodes({testing::GpuNode("host", 2, false)});
  std::vector<std::vector<std::string>> rows = GpuTopRows(ClusterGpuSamples(cluster, *readings));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][4], "37%");
  EXPECT_EQ(rows[1][4], "-");  // no reading: unknown, not idle
}

TEST(GpuTopTest, APageThatIsNotPrometheusTextIsAnErrorNamingTheLine) {
  Result<GpuReadingsByUuid> readings =
      UtilisationFromMetrics("ok 1\nDCGM_FI_DEV_GPU_UTIL{gpu=0} 1\n");
  ASSERT_FALSE(readings);
  EXPECT_THAT(readings.error().message(), HasSubstr("line 2"));
}

}  // namespace
}  // namespace strata::observe
