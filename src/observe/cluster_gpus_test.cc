#include "observe/cluster_gpus.h"

#include <gtest/gtest.h>

#include <cmath>

#include "api/encode.h"
#include "observe/cluster_objects_cache.h"
#include "observe/test_cluster.h"

namespace strata::observe {
namespace {

using testing::BoundPod;
using testing::GpuNode;
using testing::SharedNodes;
using testing::SharedPods;

TEST(ClusterGpuSamplesTest, HoldersComeFromBoundUnfinishedPods) {
  ClusterObjects cluster;
  cluster.nodes = SharedNodes({GpuNode("sim-0", 2, true)});
  cluster.pods = SharedPods({{BoundPod("train-0", "sim-0", {1}, "Running"), {}},
                             {BoundPod("old-0", "sim-0", {0}, "Succeeded"), {}}});
  std::vector<GpuSample> samples = ClusterGpuSamples(cluster, {});
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_TRUE(samples[0].holders.empty());
  EXPECT_EQ(samples[0].reading.utilization_percent, 0);
  ASSERT_EQ(samples[1].holders.size(), 1u);
  const GpuHolder& holder = samples[1].holders[0];
  EXPECT_EQ(holder.pod, "train-0");
  EXPECT_EQ(holder.job, "train");
  EXPECT_EQ(holder.queue, "research");
  EXPECT_EQ(holder.team, "ml");
  EXPECT_TRUE(holder.running);
  EXPECT_TRUE(samples[1].simulated);
  EXPECT_EQ(samples[1].reading.utilization_percent, 92);
}

TEST(ClusterGpuSamplesTest, SimulatedGpusFollowTheActivityRecordedOnTheirPods) {
  api::Pod sleeping = BoundPod("idle-0", "sim-0", {0}, "Running");
  sleeping.metadata.annotations[api::kGpuActivityAnnotation] = "0.04";
  api::Pod garbled = BoundPod("odd-0", "sim-0", {1}, "Running");
  garbled.metadata.annotations[api::kGpuActivityAnnotation] = "lots";
  ClusterObjects cluster;
  cluster.nodes = SharedNodes({GpuNode("sim-0", 2, true)});
  cluster.pods = SharedPods({{sleeping, {}}, {garbled, {}}});
  std::vector<GpuSample> samples = ClusterGpuSamples(cluster, {});
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].holders[0].activity, 0.04);
  EXPECT_EQ(samples[0].reading.utilization_percent, 4);
  // Not a share: as if not measured, the job's typical figure.
  EXPECT_EQ(samples[1].holders[0].activity, std::nullopt);
  EXPECT_EQ(samples[1].reading.utilization_percent, 92);
}

TEST(GpuActivityTextTest, SharesRoundTripWithTwoDecimalsAndNothingElseParses) {
  EXPECT_EQ(FormatGpuActivity(0.0349), "0.03");
  EXPECT_EQ(FormatGpuActivity(1.7), "1.00");
  EXPECT_EQ(FormatGpuActivity(-0.2), "0.00");
  EXPECT_EQ(ParseGpuActivity("0.85"), 0.85);
  EXPECT_EQ(ParseGpuActivity("1"), 1.0);
  for (const char* bad : {"", "1.5", "-0.1", "0.5x", "nan", " 0.5"}) {
    EXPECT_EQ(ParseGpuActivity(bad), std::nullopt) << bad;
  }
}

TEST(ClusterGpuSamplesTest, RealNodesTakeMeasuredReadingsOrNone) {
  ClusterObjects cluster;
  cluster.nodes = SharedNodes({GpuNode("host", 2, false)});
  GpuReading measured;
  measured.utilization_percent = 33;
  std::vector<GpuSample> samples = ClusterGpuSamples(cluster, {{"GPU-host-0", measured}});
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_FALSE(samples[0].simulated);
  EXPECT_EQ(samples[0].reading.utilization_percent, 33);
  EXPECT_TRUE(std::isnan(samples[1].reading.utilization_percent));
}

TEST(ClusterObjectsCacheReadTest, ReadsNodesAndPodsFromTheStore) {
  std::unique_ptr<store::Store> store = store::NewMemoryStore({});
  testing::Put(*store, GpuNode("sim-0", 8, true));
  testing::Put(*store, BoundPod("train-0", "sim-0", {0, 1}, "Running"));
  ClusterObjectsCache cache(*store);
  Result<std::shared_ptr<const ClusterObjects>> read = cache.Get();
  ASSERT_TRUE(read) << read.error().ToString();
  const ClusterObjects& cluster = **read;
  ASSERT_EQ(cluster.nodes.size(), 1u);
  ASSERT_EQ(cluster.pods.size(), 1u);
  EXPECT_EQ((*cluster.pods.begin())->pod.spec.assigned_gpus.size(), 2u);
  EXPECT_EQ(cluster.undecodable, 0);
  EXPECT_EQ(ClusterGpuSamples(cluster, {}).size(), 8u);
}

TEST(DecodeClusterObjectsTest, ReadsObjectsAsTheApiServesThemAndCountsTheRest) {
  nlohmann::json node = api::EncodeObject(api::Object(GpuNode("sim-0", 2, true)));
  nlohmann::json pod = api::EncodeObject(api::Object(BoundPod("train-0", "sim-0", {1}, "Running")));
  pod["metadata"]["creationTimestamp"] = "2026-01-02T03:04:05Z";
  nlohmann::json broken = {{"kind", "Pod"}, {"spec", 7}};
  ClusterObjects cluster = DecodeClusterObjects({node}, {pod, broken});
  ASSERT_EQ(cluster.nodes.size(), 1u);
  ASSERT_EQ(cluster.pods.size(), 1u);
  EXPECT_EQ(cluster.undecodable, 1);
  EXPECT_EQ((*cluster.pods.begin())->created, *ParseRfc3339("2026-01-02T03:04:05Z"));
  std::vector<GpuSample> samples = ClusterGpuSamples(cluster, {});
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[1].holders.size(), 1u);
}

}  // namespace
}  // namespace strata::observe
