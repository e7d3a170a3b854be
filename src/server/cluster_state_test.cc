// ClusterMetrics over a real SQLite store: after every create, update and delete, the series it
// keeps from the store's watch equal those of a full scan (a fresh ClusterMetrics, whose first
// Refresh lists every object), and the queue series equal ComputeQueueUsage over every object.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "node/test_support.h"
#include "server/cluster_metrics.h"
#include "server/queue_usage.h"
#include "store/sqlite_store.h"

namespace strata::server {
namespace {

using Json = nlohmann::json;
using Samples = std::map<std::string, double>;  // "name{labels}" -> value

constexpr char kRelists[] = "strata_apiserver_state_relists_total";

// The samples of a Prometheus text page, without those at zero and without the relist count
// (a scan starts at zero, a follower keeps a reason or a phase it saw at zero, as it should).
Samples NonZeroSamples(const std::string& text) {
  Samples samples;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] == '#' || line.starts_with(kRelists)) continue;
    const size_t space = line.rfind(' ');
    const double value = std::stod(line.substr(space + 1));
    if (value != 0) samples[line.substr(0, space)] = value;
  }
  return samples;
}

// The value of `series` ("name{labels}") on the page, -1 when it is not there.
double SampleValue(const std::string& text, const std::string& series) {
  const std::string line_start = "\n" + series + " ";
  const size_t at = text.find(line_start);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + line_start.size()));
}

// A Queue named `name` with `gpus` nominal GPUs and 64 cores, serving the local queues given.
store::Object Queue(const std::string& name, int gpus, std::vector<std::string> local_in) {
  Json locals = Json::array();
  for (const std::string& ns : local_in) locals.push_back({{"namespace", ns}, {"name", ns}});
  store::Object queue;
  queue.key = {"Queue", "", name};
  queue.body = {
      {"apiVersion", "strata.dev/v1alpha1"},
      {"kind", "Queue"},
      {"spec",
       {{"cohort", "pool"},
        {"flavors",
         {{{"name", "h100"},
           {"resources",
            {{{"name", "gpu"}, {"nominal", gpus}}, {{"name", "cpu"}, {"nominal", 64}}}}}}},
        {"localQueues", locals}}}};
  return queue;
}

store::Object Job(const std::string& ns, const std::string& name, const std::string& queue) {
  store::Object job;
  job.key = {"Job", ns, name};
  job.body = {{"apiVersion", "strata.dev/v1alpha1"},
              {"kind", "Job"},
              {"spec", {{"replicas", 2}, {"queue", queue}, {"resources", {{"gpu", 8}}}}}};
  return job;
}

// A standalone pod asking for `resources`, bound to `node` unless empty.
store::Object Pod(const std::string& ns, const std::string& name, const std::string& queue,
                  const std::string& node, Json resources) {
  store::Object pod;
  pod.key = {"Pod", ns, name};
  pod.body = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"spec", {{"queue", queue}, {"resources", std::move(resources)}}}};
  if (!node.empty()) pod.body["spec"]["nodeName"] = node;
  return pod;
}

class ClusterStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::OpenSqliteStore(dir_.path(), {}, store::SqliteDurability::kProcessCrash);
    ASSERT_TRUE(opened) << opened.error().ToString();
    store_ = std::move(*opened);
  }

  store::Object cluster::Stored(const store::ObjectKey& key) {
    auto object = store_->Get(key);
    EXPECT_TRUE(object) << key.Describe();
    return object ? *object : store::Object{};
  }

  // What a scan of every stored object gives: a fresh ClusterMetrics lists the store.
  Samples FullScan() {
    metrics::Registry registry;
    ClusterMetrics scan(*store_, registry);
    EXPECT_TRUE(scan.Refresh().ok());
    return NonZeroSamples(registry.RenderText());
  }

  // The queue series as ComputeQueueUsage gives them over every stored queue and pod.
  Samples QueueSeriesByComputeQueueUsage() {
    const auto bodies = [&](const std::string& kind) {
      std::vector<Json> listed;
      Result<store::ListResult> objects = store_->List({kind, std::nullopt, {}});
      EXPECT_TRUE(objects) << kind;
      if (objects) {
        for (const store::Object& object : objects->items) listed.push_back(object.body);
      }
      return listed;
    };
    const std::vector<Json> queues = bodies("Queue");
    const std::vector<Json> pods = bodies("Pod");
    Samples samples;
    for (const QueueUsage& queue : ComputeQueueUsage(queues, pods)) {
      for (const auto& [resource, usage] : queue.resources) {
        const std::string labels = "{queue=\"" + queue.name + "\",resource=\"" + resource + "\"}";
        const auto add = [&](const std::string& name, const Quantity& quantity) {
          if (quantity.milli() != 0) {
            samples[name + labels] = static_cast<double>(quantity.milli()) / 1000.0;
          }
        };
        add("strata_queue_nominal_quota", usage.nominal);
        add("strata_queue_usage", usage.used);
        add("strata_queue_borrowed", usage.borrowed);
      }
    }
    return samples;
  }

  static Samples QueueSeriesOf(const Samples& samples) {
    Samples queue_series;
    for (const auto& [series, value] : samples) {
      if (series.starts_with("strata_queue_nominal_quota") ||
          series.starts_with("strata_queue_usage") || series.starts_with("strata_queue_borrowed")) {
        queue_series[series] = value;
      }
    }
    return queue_series;
  }

  // Refreshes the follower and checks it against both oracles; returns its page.
  std::string ExpectEqualToFullScan(const std::string& step) {
    SCOPED_TRACE(step);
    EXPECT_TRUE(follower_->Refresh().ok());
    const std::string page = registry_.RenderText();
    const Samples followed = NonZeroSamples(page);
    EXPECT_EQ(followed, FullScan());
    EXPECT_EQ(QueueSeriesOf(followed), QueueSeriesByComputeQueueUsage());
    return page;
  }

  node::testing::TempDir dir_;
  std::unique_ptr<store::Store> store_;
  metrics::Registry registry_;
  std::unique_ptr<ClusterMetrics> follower_;
};

TEST_F(ClusterStateTest, FollowsQueuesJobsAndPodsAsAFullScanWould) {
  follower_ = std::make_unique<ClusterMetrics>(*store_, registry_);
  ExpectEqualToFullScan("empty store");

  ASSERT_TRUE(store_->Create(Queue("team-a-cq", 8, {"team-a"})));
  ASSERT_TRUE(store_->Create(Job("team-a", "big", "team-a")));
  ASSERT_TRUE(store_->Create(
      Pod("team-a", "running", "team-a", "n0", {{"gpu", 12}, {"cpu", "500m"}, {"memory", 0}})));
  ASSERT_TRUE(store_->Create(Pod("team-a", "waiting", "team-a", "", {{"gpu", 1}})));
  std::string page = ExpectEqualToFullScan("queue, job, pods");
  EXPECT_EQ(SampleValue(page, "strata_queue_usage{queue=\"team-a-cq\",resource=\"gpu\"}"), 12);
  EXPECT_EQ(SampleValue(page, "strata_queue_usage{queue=\"team-a-cq\",resource=\"memory\"}"), 0)
      << "a resource requested at zero is listed, as ComputeQueueUsage lists it";
  EXPECT_EQ(SampleValue(page, "strata_queue_borrowed{queue=\"team-a-cq\",resource=\"gpu\"}"), 4);
  EXPECT_EQ(SampleValue(page,
                        "strata_queue_pending_workloads{queue=\"team-a-cq\","
                        "reason=\"NotYetScheduled\"}"),
            2);
  EXPECT_EQ(SampleValue(page, "strata_apiserver_objects{kind=\"Pod\"}"), 2);

  // The scheduler explains the job: the reason moves, the old one's count drops.
  store::Object job = cluster::Stored({"Job", "team-a", "big"});
  job.body["status"] = {{"phase", "Pending"}, {"reason", "WaitingForQuota"}};
  ASSERT_TRUE(store_->Update(job));
  store::Object running = cluster::Stored({"Pod", "team-a", "running"});
  running.body["spec"]["assignedGpus"] = Json::array({{{"index", 0}}, {{"index", 1}}});
  running.body["status"] = {{"phase", "Running"}};
  ASSERT_TRUE(store_->Update(running));
  store::Object node;
  node.key = {"Node", "", "n0"};
  node.body = {{"kind", "Node"}, {"status", {{"gpus", Json::array({{}, {}, {}, {}})}}}};
  ASSERT_TRUE(store_->Create(node));
  page = ExpectEqualToFullScan("job explained, pod running, node");
  EXPECT_EQ(SampleValue(page, "strata_scheduler_pending_workloads{reason=\"WaitingForQuota\"}"), 1);
  EXPECT_EQ(SampleValue(page, "strata_scheduler_pending_workloads{reason=\"NotYetScheduled\"}"), 1);
  EXPECT_EQ(SampleValue(page, "strata_apiserver_gpus{state=\"held\"}"), 2);
  EXPECT_EQ(SampleValue(page, "strata_apiserver_gpus{state=\"free\"}"), 2);

  // A pod that names a queue before the queue exists is charged to it once it does.
  ASSERT_TRUE(store_->Create(Pod("team-b", "early", "late-cq", "n1", {{"gpu", 2}})));
  ExpectEqualToFullScan("pod of an unknown queue");
  ASSERT_TRUE(store_->Create(Queue("late-cq", 1, {})));
  page = ExpectEqualToFullScan("its queue created");
  EXPECT_EQ(SampleValue(page, "strata_queue_usage{queue=\"late-cq\",resource=\"gpu\"}"), 2);

  // A finished pod releases its quota and its GPUs; a gone job stops waiting.
  running.body["status"] = {{"phase", "Succeeded"}};
  running.resource_version = 0;
  ASSERT_TRUE(store_->Update(running));
  ASSERT_TRUE(store_->Delete({"Job", "team-a", "big"}));
  page = ExpectEqualToFullScan("pod succeeded, job deleted");
  EXPECT_EQ(SampleValue(page, "strata_queue_usage{queue=\"team-a-cq\",resource=\"gpu\"}"), 0);
  EXPECT_EQ(SampleValue(page, "strata_scheduler_pending_workloads{reason=\"WaitingForQuota\"}"), 0)
      << "a reason nobody waits for any more stays at zero";
  EXPECT_EQ(SampleValue(page, "strata_pods_by_phase{phase=\"Succeeded\"}"), 1);

  // A deleted queue's series go; its pods' waits no longer count under it.
  ASSERT_TRUE(store_->Delete({"Queue", "", "team-a-cq"}));
  page = ExpectEqualToFullScan("queue deleted");
  EXPECT_EQ(page.find("strata_queue_nominal_quota{queue=\"team-a-cq\""), std::string::npos);
  EXPECT_EQ(SampleValue(page,
                        "strata_queue_pending_workloads{queue=\"team-a-cq\","
                        "reason=\"NotYetScheduled\"}"),
            0);
  EXPECT_EQ(SampleValue(page, kRelists), 1) << "one list at the first scrape, then the watch";
}

TEST_F(ClusterStateTest, AWatchThatFellBehindIsReplacedByAFreshList) {
  ASSERT_TRUE(store_->Create(Queue("team-a-cq", 8, {"team-a"})));
  ClusterMetricsOptions options;
  options.watch_buffer = 1;
  follower_ = std::make_unique<ClusterMetrics>(*store_, registry_, options);
  ExpectEqualToFullScan("listed");

  // One batch of more changes than the watch may hold: the store expires the watch.
  std::vector<store::Write> writes;
  for (int i = 0; i < 6; ++i) {
    writes.push_back({store::WriteOp::kCreate, Pod("team-a", "p" + std::to_string(i), "team-a",
                                                   i % 2 ? "n0" : "", {{"gpu", i}})});
  }
  writes.push_back({store::WriteOp::kDelete, Queue("team-a-cq", 8, {})});
  writes.push_back({store::WriteOp::kCreate, Queue("team-b-cq", 4, {"team-a"})});
  ASSERT_TRUE(store_->Apply(std::move(writes)));
  std::string page = ExpectEqualToFullScan("after the batch");
  EXPECT_EQ(SampleValue(page, kRelists), 2);
  EXPECT_EQ(SampleValue(page, "strata_queue_usage{queue=\"team-b-cq\",resource=\"gpu\"}"), 9);
  EXPECT_EQ(page.find("strata_queue_usage{queue=\"team-a-cq\""), std::string::npos);

  // The fresh watch carries on.
  ASSERT_TRUE(store_->Delete({"Pod", "team-a", "p5"}));
  page = ExpectEqualToFullScan("one more change");
  EXPECT_EQ(SampleValue(page, "strata_queue_usage{queue=\"team-b-cq\",resource=\"gpu\"}"), 4);
  EXPECT_EQ(SampleValue(page, kRelists), 2);
}

TEST_F(ClusterStateTest, ScrapesWhileOthersWriteEndEqualToAFullScan) {
  ASSERT_TRUE(store_->Create(Queue("team-a-cq", 8, {"team-a"})));
  follower_ = std::make_unique<ClusterMetrics>(*store_, registry_);
  ExpectEqualToFullScan("listed");
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([this, w] {
      for (int i = 0; i < 100; ++i) {
        const std::string name = "w" + std::to_string(w) + "-" + std::to_string(i);
        ASSERT_TRUE(store_->Create(Pod("team-a", name, "team-a", "n0", {{"gpu", 1}})));
        if (i % 3 == 0) {
          ASSERT_TRUE(store_->Delete({"Pod", "team-a", name}));
        }
      }
    });
  }
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(follower_->Refresh().ok());
  for (std::thread& writer : writers) writer.join();
  const std::string page = ExpectEqualToFullScan("after the writers");
  EXPECT_EQ(SampleValue(page, "strata_queue_usage{queue=\"team-a-cq\",resource=\"gpu\"}"), 132);
}

}  // namespace
}  // namespace strata::server
