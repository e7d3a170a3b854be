#include "observe/cluster_cost.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "metrics/prometheus_text.h"
#include "observe/test_cluster.h"

namespace strata::observe {
namespace {

using std::chrono::hours;
using testing::BoundPod;
using testing::GpuNode;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::SharedNodes;
using testing::SharedPods;

TEST(CostPodsOfTest, RequestsModelAndTimesComeFromThePodItsNodeAndAnnotations) {
  TimePoint created = FakeClock::kDefaultStart;
  ClusterObjects cluster;
  cluster.nodes = SharedNodes({GpuNode("n0", 8, false)});
  api::Pod running = BoundPod("a", "n0", {0, 1}, "Running");
  running.metadata.uid = "uid-a";
  running.metadata.annotations[api::kBoundAtAnnotation] = FormatRfc3339(created + hours(1));
  api::Pod finished = BoundPod("b", "n0", {2}, "Succeeded", 250);
  finished.metadata.annotations[api::kFinishedAtAnnotation] = FormatRfc3339(created + hours(3));
  api::Pod finished_unknown = BoundPod("c", "n0", {3}, "Failed");
  api::Pod pending = BoundPod("d", "", {}, "Pending");
  // Waited two hours for its GPU: it pays from when its processes started, not from creation.
  api::Pod started = BoundPod("e", "n0", {4}, "Running");
  started.metadata.annotations[api::kStartedAtAnnotation] = FormatRfc3339(created + hours(2));
  cluster.pods = SharedPods({{running, created},
                             {finished, created},
                             {finished_unknown, created},
                             {pending, created},
                             {started, created}});

  // The finished pod without a finish time is left out.
  std::vector<CostPod> pods = CostPodsOf(cluster);
  ASSERT_EQ(pods.size(), 3u);
  EXPECT_EQ(pods[2].start, created + hours(2));
  const CostPod& a = pods[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.gpu_model, "H100-80GB");
  EXPECT_DOUBLE_EQ(a.gpus, 2);
  EXPECT_DOUBLE_EQ(a.cpu_cores, 8);
  EXPECT_DOUBLE_EQ(a.memory_gib, 64);
  EXPECT_EQ(a.job, "train");
  EXPECT_EQ(a.start, created + hours(1));
  EXPECT_FALSE(a.end.has_value());
  EXPECT_EQ(a.uid, "uid-a");
  const CostPod& b = pods[1];
  EXPECT_DOUBLE_EQ(b.gpus, 0.25);
  EXPECT_EQ(b.start, created);
  EXPECT_EQ(b.end, created + hours(3));
}

TEST(AddClusterMetricsTest, AScrapeRendersGpuAndCostFamiliesFromTheStore) {
  std::unique_ptr<store::Store> store = testing::SimulatedClusterStore(2);
  FakeClock clock(RealClock::Instance().Now());
  clock.Advance(hours(2));  // pods were created "now" by the real clock: two hours ago
  metrics::Registry registry;
  ClusterMetricsOptions options;
  options.clock = &clock;
  options.service_tokens = [] { return std::map<std::string, double>{{"llm", 4e6}}; };
  AddClusterMetrics(registry, std::make_shared<ClusterObjectsCache>(*store), options);
  std::string page = registry.RenderText();

  Result<std::vector<metrics::Sample>> parsed = metrics::ParsePrometheusText(page);
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  int util_series = 0;
  for (const metrics::Sample& sample : *parsed)
    util_series += sample.name == "DCGM_FI_DEV_GPU_UTIL";
  EXPECT_EQ(util_series, 16);
  EXPECT_THAT(
      page, HasSubstr("pod=\"train-0\",strata_job=\"train\",service=\"\",queue=\"research\"} 92"));
  EXPECT_THAT(page, HasSubstr("strata_gpu_allocated_gpus{scope=\"cluster\",name=\"\"} 4.5\n"));
  EXPECT_THAT(page, HasSubstr("strata_cost_hourly_rate{by=\"team\",name=\"ml\""));
  EXPECT_THAT(page, HasSubstr("strata_cost_accrued{by=\"job\",name=\"default/train\""));
  EXPECT_THAT(page, HasSubstr("strata_cost_per_million_tokens{service=\"llm\""));
}

TEST(AddClusterMetricsTest, WithALedgerTheCostOfADeletedPodIsStillRendered) {
  std::unique_ptr<store::Store> store = testing::SimulatedClusterStore(2);
  FakeClock clock(RealClock::Instance().Now());
  std::string pattern = (std::filesystem::temp_directory_path() / "cluster-cost-XXXXXX").string();
  const std::string dir = mkdtemp(pattern.data());
  Result<std::unique_ptr<CostLedger>> opened =
      CostLedger::Open(dir + "/" + kCostLedgerFileName, DefaultPriceTable(), clock.Now());
  ASSERT_TRUE(opened) << opened.error().ToString();
  std::shared_ptr<CostLedger> ledger = std::move(*opened);
  auto cache = std::make_shared<ClusterObjectsCache>(*store);
  auto sync = [&] {
    Result<std::shared_ptr<const ClusterObjects>> cluster = cache->Get();
    ASSERT_TRUE(cluster);
    ASSERT_TRUE(ledger->Sync(CostPodsOf(**cluster), clock.Now()).ok());
  };
  sync();
  metrics::Registry registry;
  ClusterMetricsOptions options;
  options.clock = &clock;
  options.ledger = ledger;
  AddClusterMetrics(registry, cache, options);

  // train-0 held 4 GPUs for an hour, then was deleted.
  clock.Advance(hours(1));
  ASSERT_TRUE(store->Delete({"Pod", "default", "train-0"}).has_value());
  sync();
  clock.Advance(hours(1));
  const std::string page = registry.RenderText(metrics::FamilySelection({"strata_cost_accrued"}));
  Result<std::vector<metrics::Sample>> parsed = metrics::ParsePrometheusText(page);
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  std::optional<double> train;
  for (const metrics::Sample& sample : *parsed) {
    const std::string* by = sample.Label("by");
    const std::string* name = sample.Label("name");
    if (by != nullptr && *by == "job" && name != nullptr && *name == "default/train") {
      train = sample.value;
    }
  }
  // 4 H100s at 2.50, 8 cores at 0.03 and 64 GiB at 0.004 for the hour it ran (and the
  // milliseconds between the store's creation and the clock's start).
  ASSERT_TRUE(train.has_value()) << page;
  EXPECT_NEAR(*train, 4 * 2.5 + 8 * 0.03 + 64 * 0.004, 0.01);
  std::filesystem::remove_all(dir);
}

TEST(AddClusterMetricsTest, AScrapeOfSomeFamiliesRendersThoseAlone) {
  std::unique_ptr<store::Store> store = testing::SimulatedClusterStore(2);
  metrics::Registry registry;
  int token_reads = 0;
  ClusterMetricsOptions options;
  options.service_tokens = [&token_reads] {
    ++token_reads;
    return std::map<std::string, double>{{"llm", 4e6}};
  };
  AddClusterMetrics(registry, std::make_shared<ClusterObjectsCache>(*store), options);

  const std::string util =
      registry.RenderText(metrics::FamilySelection({"DCGM_FI_DEV_GPU_UTIL", "no_such_family"}));
  Result<std::vector<metrics::Sample>> parsed = metrics::ParsePrometheusText(util);
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(parsed->size(), 16u);
  for (const metrics::Sample& sample : *parsed) EXPECT_EQ(sample.name, "DCGM_FI_DEV_GPU_UTIL");
  // A GPU-only scrape computes no cost.
  EXPECT_EQ(token_reads, 0);

  const std::string cost = registry.RenderText(metrics::FamilySelection({"strata_cost_accrued"}));
  EXPECT_THAT(cost, HasSubstr("# TYPE strata_cost_accrued gauge\n"));
  EXPECT_THAT(cost, HasSubstr("strata_cost_accrued{by=\"team\",name=\"ml\""));
  EXPECT_THAT(cost, Not(HasSubstr("DCGM_")));
  EXPECT_THAT(cost, Not(HasSubstr("strata_cost_hourly_rate")));
  EXPECT_EQ(token_reads, 1);
}

TEST(AddClusterMetricsTest, QueueLabelsNameTheQueueALocalQueueBelongsTo) {
  std::unique_ptr<store::Store> store = store::NewMemoryStore({});
  api::Queue queue;
  queue.metadata.name = "research-cq";
  queue.spec.local_queues = {{"default", "research"}};
  testing::Put(*store, queue);
  testing::Put(*store, GpuNode("sim-0", 8, true));
  // "research" is a LocalQueue of research-cq in namespace default, and names nothing in
  // namespace lab: that pod keeps the name it wrote.
  testing::Put(*store, BoundPod("train-0", "sim-0", {0, 1}, "Running"));
  api::Pod lab = BoundPod("lab-0", "sim-0", {2}, "Running");
  lab.metadata.namespace_name = "lab";
  testing::Put(*store, lab);
  metrics::Registry registry;
  AddClusterMetrics(registry, std::make_shared<ClusterObjectsCache>(*store), {});
  const std::string page = registry.RenderText();

  EXPECT_THAT(
      page, HasSubstr("pod=\"train-0\",strata_job=\"train\",service=\"\",queue=\"research-cq\"}"));
  EXPECT_THAT(page,
              HasSubstr("pod=\"lab-0\",strata_job=\"train\",service=\"\",queue=\"research\"}"));
  EXPECT_THAT(page,
              HasSubstr("strata_gpu_allocated_gpus{scope=\"queue\",name=\"research-cq\"} 2\n"));
  EXPECT_THAT(page, HasSubstr("strata_gpu_allocated_gpus{scope=\"queue\",name=\"research\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("strata_cost_hourly_rate{by=\"queue\",name=\"research-cq\""));
}

}  // namespace
}  // namespace strata::observe
