// ClusterMetrics over a real SQLite store: after every create, update and delete, the series it
// keeps from the cache equal those of a full scan (a fresh cache and ClusterMetrics, whose first
// Refresh lists every object).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cluster/indexes.h"
#include "cluster/stored_object.h"
#include "node/test_support.h"
#include "server/cluster_metrics.h"
#include "store/sqlite_store.h"

namespace strata::server {
namespace {

using Json = nlohmann::json;
using Samples = std::map<std::string, double>;  // "name{labels}" -> value

constexpr char kLists[] = "strata_apiserver_state_lists";

// The samples of a Prometheus text page, without those at zero and without the relist count
// (a scan starts at zero, a follower keeps a reason or a phase it saw at zero, as it should;
// a follower lists again when its watch fell behind, a scan lists once).
Samples NonZeroSamples(const std::string& text) {
  Samples samples;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] == '#' || line.starts_with(kLists)) continue;
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

store::Object Encoded(const api::Object& object) { return cluster::EncodeForStore(object); }

// A Queue named `name` with `gpus` nominal GPUs and 64 cores, serving the local queues given,
// and the use its status reports (as the scheduler adapter writes it).
store::Object Queue(const std::string& name, int gpus, std::vector<std::string> local_in,
                    int used_gpus = 0) {
  api::Queue queue;
  queue.metadata.name = name;
  queue.spec.cohort = "pool";
  queue.spec.flavors = {{"h100",
                         {{"gpu", Quantity::FromUnits(gpus), std::nullopt, std::nullopt},
                          {"cpu", Quantity::FromUnits(64), std::nullopt, std::nullopt}}}};
  for (const std::string& ns : local_in) queue.spec.local_queues.push_back({ns, ns});
  if (used_gpus > 0) {
    const Quantity used = Quantity::FromUnits(used_gpus);
    const Quantity nominal = Quantity::FromUnits(gpus);
    queue.status.flavors_usage = {
        {"h100", {{"gpu", nominal, used, used > nominal ? used - nominal : Quantity()}}}};
    queue.status.admitted_workloads = 1;
  }
  return Encoded(queue);
}

store::Object Job(const std::string& ns, const std::string& name, const std::string& queue,
                  const std::string& reason = "") {
  api::Job job;
  job.metadata.name = name;
  job.metadata.namespace_name = ns;
  job.spec.replicas = 2;
  job.spec.queue = queue;
  job.spec.resources.gpu = Quantity::FromUnits(8);
  job.spec.template_.command = {"python", "train.py"};
  job.status.reason = reason;
  return Encoded(job);
}

// A standalone pod of `queue`, bound to `node` with `gpus` GPUs unless `node` is empty.
store::Object Pod(const std::string& ns, const std::string& name, const std::string& queue,
                  const std::string& node, int gpus,
                  api::PodPhase phase = api::PodPhase::kPending) {
  api::Pod pod;
  pod.metadata.name = name;
  pod.metadata.namespace_name = ns;
  pod.spec.queue = queue;
  pod.spec.resources.gpu = Quantity::FromUnits(gpus);
  pod.spec.template_.command = {"sleep", "1"};
  pod.spec.node_name = node;
  if (!node.empty()) {
    for (int i = 0; i < gpus; ++i) {
      api::AssignedGpu gpu;
      gpu.index = i;
      pod.spec.assigned_gpus.push_back(gpu);
    }
  }
  pod.status.phase = phase;
  return Encoded(pod);
}

store::Object Node(const std::string& name, int gpus) {
  api::Node node;
  node.metadata.name = name;
  for (int i = 0; i < gpus; ++i) {
    api::NodeGpu gpu;
    gpu.index = i;
    gpu.model = "H100-80GB";
    node.status.gpus.push_back(gpu);
  }
  return Encoded(node);
}

class ClusterStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::OpenSqliteStore(dir_.path(), {}, store::SqliteDurability::kProcessCrash);
    ASSERT_TRUE(opened) << opened.error().ToString();
    store_ = std::move(*opened);
  }

  void Follow(size_t watch_buffer = 100000) {
    cluster::CacheOptions options = cluster::ControlPlaneCacheOptions();
    options.watch_buffer = watch_buffer;
    cache_ = std::make_unique<cluster::Cache>(*store_, options);
    follower_ = std::make_unique<ClusterMetrics>(*cache_, registry_);
  }

  // Replaces the stored object with `object` whatever its version.
  void Replace(store::Object object) {
    Result<store::Object> current = store_->Get(object.key);
    ASSERT_TRUE(current) << object.key.Describe();
    object.resource_version = current->resource_version;
    ASSERT_TRUE(store_->Update(std::move(object)));
  }

  // What a scan of every stored object gives: a fresh cache lists the store.
  Samples FullScan() {
    cluster::Cache cache(*store_, cluster::ControlPlaneCacheOptions());
    metrics::Registry registry;
    ClusterMetrics scan(cache, registry);
    EXPECT_TRUE(scan.Refresh().ok());
    return NonZeroSamples(registry.RenderText());
  }

  // Refreshes the follower and checks it against a full scan; returns its page.
  std::string ExpectEqualToFullScan(const std::string& step) {
    SCOPED_TRACE(step);
    EXPECT_TRUE(follower_->Refresh().ok());
    const std::string page = registry_.RenderText();
    EXPECT_EQ(NonZeroSamples(page), FullScan());
    return page;
  }

  node::testing::TempDir dir_;
  std::unique_ptr<store::Store> store_;
  metrics::Registry registry_;
  std::unique_ptr<cluster::Cache> cache_;
  std::unique_ptr<ClusterMetrics> follower_;
};

TEST_F(ClusterStateTest, FollowsQueuesJobsAndPodsAsAFullScanWould) {
  Follow();
  ExpectEqualToFullScan("empty store");
  const double lists = SampleValue(registry_.RenderText(), kLists);

  ASSERT_TRUE(store_->Create(Queue("team-a-cq", 8, {"team-a"}, 12)));
  ASSERT_TRUE(store_->Create(Job("team-a", "big", "team-a")));
  ASSERT_TRUE(store_->Create(Pod("team-a", "running", "team-a", "n0", 2, api::PodPhase::kRunning)));
  ASSERT_TRUE(store_->Create(Pod("team-a", "waiting", "team-a", "", 1)));
  std::string page = ExpectEqualToFullScan("queue, job, pods");
  EXPECT_EQ(SampleValue(page, "strata_queue_usage{queue=\"team-a-cq\",resource=\"gpu\"}"), 12)
      << "the use the queue's status reports";
  EXPECT_EQ(SampleValue(page, "strata_queue_nominal_quota{queue=\"team-a-cq\",resource=\"cpu\"}"),
            64);
  EXPECT_EQ(SampleValue(page, "strata_queue_borrowed{queue=\"team-a-cq\",resource=\"gpu\"}"), 4);
  EXPECT_EQ(SampleValue(page,
                        "strata_queue_pending_workloads{queue=\"team-a-cq\","
                        "reason=\"NotYetScheduled\"}"),
            2);
  EXPECT_EQ(SampleValue(page, "strata_apiserver_objects{kind=\"Pod\"}"), 2);

  // The scheduler explains the job: the reason moves, the old one's count drops.
  Replace(Job("team-a", "big", "team-a", "WaitingForQuota"));
  ASSERT_TRUE(store_->Create(Node("n0", 4)));
  page = ExpectEqualToFullScan("job explained, node");
  EXPECT_EQ(SampleValue(page, "strata_scheduler_pending_workloads{reason=\"WaitingForQuota\"}"), 1);
  EXPECT_EQ(SampleValue(page, "strata_scheduler_pending_workloads{reason=\"NotYetScheduled\"}"), 1);
  EXPECT_EQ(SampleValue(page, "strata_apiserver_gpus{state=\"held\"}"), 2);
  EXPECT_EQ(SampleValue(page, "strata_apiserver_gpus{state=\"free\"}"), 2);

  // A pod that names a queue before the queue exists counts under it once it does.
  ASSERT_TRUE(store_->Create(Pod("team-b", "early", "late-cq", "", 2)));
  ExpectEqualToFullScan("pod of an unknown queue");
  ASSERT_TRUE(store_->Create(Queue("late-cq", 1, {})));
  page = ExpectEqualToFullScan("its queue created");
  EXPECT_EQ(SampleValue(page,
                        "strata_queue_pending_workloads{queue=\"late-cq\","
                        "reason=\"NotYetScheduled\"}"),
            1);

  // A finished pod releases its GPUs; the queue's status drops its use; a gone job stops
  // waiting.
  Replace(Pod("team-a", "running", "team-a", "n0", 2, api::PodPhase::kSucceeded));
  Replace(Queue("team-a-cq", 8, {"team-a"}));
  ASSERT_TRUE(store_->Delete({"Job", "team-a", "big"}));
  page = ExpectEqualToFullScan("pod succeeded, job deleted");
  EXPECT_EQ(SampleValue(page, "strata_queue_usage{queue=\"team-a-cq\",resource=\"gpu\"}"), 0);
  EXPECT_EQ(SampleValue(page, "strata_apiserver_gpus{state=\"held\"}"), 0);
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
  EXPECT_EQ(SampleValue(page, kLists), lists) << "each kind listed once, then followed";
}

TEST_F(ClusterStateTest, AWatchThatFellBehindIsReplacedByAFreshList) {
  ASSERT_TRUE(store_->Create(Queue("team-a-cq", 8, {"team-a"})));
  Follow(/*watch_buffer=*/1);
  ExpectEqualToFullScan("listed");
  const double lists = SampleValue(registry_.RenderText(), kLists);

  // One batch of more changes than the watch may hold: the store expires the watches.
  std::vector<store::Write> writes;
  for (int i = 0; i < 6; ++i) {
    writes.push_back({store::WriteOp::kCreate,
                      Pod("team-a", "p" + std::to_string(i), "team-a", i % 2 ? "n0" : "", i)});
  }
  store::Object gone;
  gone.key = {"Queue", "", "team-a-cq"};
  writes.push_back({store::WriteOp::kDelete, gone});
  writes.push_back({store::WriteOp::kCreate, Queue("team-b-cq", 4, {"team-a"}, 9)});
  ASSERT_TRUE(store_->Apply(std::move(writes)));
  std::string page = ExpectEqualToFullScan("after the batch");
  EXPECT_GT(SampleValue(page, kLists), lists);
  EXPECT_EQ(SampleValue(page, "strata_queue_usage{queue=\"team-b-cq\",resource=\"gpu\"}"), 9);
  EXPECT_EQ(page.find("strata_queue_usage{queue=\"team-a-cq\""), std::string::npos);

  // The fresh watch carries on.
  const double relisted = SampleValue(page, kLists);
  ASSERT_TRUE(store_->Delete({"Pod", "team-a", "p5"}));
  page = ExpectEqualToFullScan("one more change");
  EXPECT_EQ(SampleValue(page, "strata_apiserver_objects{kind=\"Pod\"}"), 5);
  EXPECT_EQ(SampleValue(page, kLists), relisted);
}

TEST_F(ClusterStateTest, ScrapesWhileOthersWriteEndEqualToAFullScan) {
  ASSERT_TRUE(store_->Create(Queue("team-a-cq", 8, {"team-a"})));
  Follow();
  ExpectEqualToFullScan("listed");
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([this, w] {
      for (int i = 0; i < 100; ++i) {
        const std::string name = "w" + std::to_string(w) + "-" + std::to_string(i);
        ASSERT_TRUE(
            store_->Create(Pod("team-a", name, "team-a", "n0", 1, api::PodPhase::kRunning)));
        if (i % 3 == 0) {
          ASSERT_TRUE(store_->Delete({"Pod", "team-a", name}));
        }
      }
    });
  }
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(follower_->Refresh().ok());
  for (std::thread& writer : writers) writer.join();
  const std::string page = ExpectEqualToFullScan("after the writers");
  EXPECT_EQ(SampleValue(page, "strata_pods_by_phase{phase=\"Running\"}"), 132);
}

}  // namespace
}  // namespace strata::server
