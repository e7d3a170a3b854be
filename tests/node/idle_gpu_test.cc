// Idle reclaim on simulated GPUs, end to end in one process as `strata up` runs it: the
// scheduler adapter and the job controller put two jobs on a simulated node, the node agent runs
// their pods as real processes (ProcessRuntime) and measures their CPU use, and idle reclaim
// judges the jobs on the GPU readings derived from it. One job's process sleeps, the other's
// spins. The store is real (in memory); only idle reclaim's clock is a FakeClock, so that
// the queue's idle time passes without waiting for it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

#include "api/manifest.h"
#include "cluster/indexes.h"
#include "cluster/stored_object.h"
#include "controller/idle_reclaim.h"
#include "controller/job_controller.h"
#include "controller/scheduler_loop.h"
#include "node/node_agent.h"
#include "node/process_runtime.h"
#include "node/test_support.h"
#include "observe/cluster_gpus.h"
#include "observe/cluster_objects_cache.h"
#include "observe/idle_gpus.h"

namespace strata::controller {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// However loaded the machine, both jobs' activity is measured well within this.
constexpr Duration kMeasureTimeout = 120s;

// A simulated node with two GPUs, a queue that calls a job idle under 30 % busy for ten
// minutes, and two one-GPU jobs in it: "notebook" sleeps, "train" spins four busy loops (so that
// it still gets most of a core on a loaded two-core machine, ctest running other tests beside it).
std::string Cluster() {
  return R"(apiVersion: strata.dev/v1alpha1
kind: Node
metadata:
  name: sim-0
  labels: {strata.dev/simulated: "true"}
  annotations: {strata.dev/address: 127.0.0.1}
status:
  capacity: {cpu: 64, memory: 256Gi}
  gpus:
  - {index: 0, uuid: GPU-sim-0-0, model: H100-80GB, memory: 80Gi}
  - {index: 1, uuid: GPU-sim-0-1, model: H100-80GB, memory: 80Gi}
  conditions: [{type: Ready, status: "True", lastHeartbeatTime: ")" +
         FormatRfc3339(RealClock::Instance().Now()) + R"("}]
---
apiVersion: strata.dev/v1alpha1
kind: Queue
metadata:
  name: research
  annotations: {strata.dev/idle-threshold: "30%", strata.dev/idle-after: 10m}
---
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: notebook, namespace: default}
spec:
  replicas: 1
  queue: research
  resources: {cpu: "1", memory: 1Gi, gpu: 1}
  template: {command: [sleep, "600"]}
---
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: train, namespace: default}
spec:
  replicas: 1
  queue: research
  resources: {cpu: "1", memory: 1Gi, gpu: 1}
  template: {command: [sh, -c, "for i in 1 2 3 4; do (while :; do :; done) & done; wait"]}
)";
}

class IdleGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = store::NewMemoryStore({});
    Result<std::vector<api::Object>> objects = api::DecodeManifests({{"cluster.yaml", Cluster()}});
    ASSERT_TRUE(objects) << objects.error().ToString();
    for (const api::Object& object : *objects) {
      Result<store::Object> created = store_->Create(cluster::EncodeForStore(object));
      ASSERT_TRUE(created) << created.error().ToString();
    }
    node::ProcessRuntime::Options runtime_options;
    runtime_options.data_dir = data_.path();
    Result<std::unique_ptr<node::ProcessRuntime>> runtime =
        node::ProcessRuntime::Create(runtime_options);
    ASSERT_TRUE(runtime) << runtime.error().ToString();
    runtime_ = std::move(*runtime);
    node::NodeAgentOptions agent_options;
    agent_options.node_names = {"sim-0"};
    agent_options.data_dir = data_.path();
    agent_options.stop_grace = 1s;
    agent_options.base_env = node::DefaultBaseEnvironment();
    agent_options.gpu_activity_window = 1s;
    cache_ = std::make_unique<cluster::Cache>(*store_, cluster::ControlPlaneCacheOptions());
    agent_ = std::make_unique<node::NodeAgent>(*store_, *cache_, *runtime_, RealClock::Instance(),
                                               agent_options);
  }

  void TearDown() override {
    if (agent_ != nullptr) agent_->StopEverything();
  }

  // The busy share recorded on each job's pod, by job; a pod with none is left out.
  std::map<std::string, double> RecordedActivity() {
    std::map<std::string, double> activity;
    Result<std::vector<cluster::Stored<api::Pod>>> pods =
        cluster::ListStored<api::Pod>(*store_, "Pod");
    EXPECT_TRUE(pods) << pods.error().ToString();
    if (!pods) return activity;
    for (const cluster::Stored<api::Pod>& pod : *pods) {
      auto recorded = pod.value.metadata.annotations.find(api::kGpuActivityAnnotation);
      if (recorded == pod.value.metadata.annotations.end()) continue;
      std::optional<double> share = observe::ParseGpuActivity(recorded->second);
      if (share) activity[pod.value.spec.owner.name] = *share;
    }
    return activity;
  }

  // Runs the scheduler adapter, the job controller and the node agent, as `strata up` does,
  // until both jobs' pods have the activity their processes call for: the sleeping one under
  // 20 %, the spinning one over 40 % (above the queue's 30 % threshold, with room for a loaded
  // machine). Returns what was last recorded.
  std::map<std::string, double> RunUntilMeasured() {
    SchedulerLoop scheduler(*store_, *cache_, RealClock::Instance());
    JobController jobs(*store_, *cache_, RealClock::Instance());
    std::map<std::string, double> activity;
    for (TimePoint deadline = RealClock::Instance().Now() + kMeasureTimeout;
         RealClock::Instance().Now() < deadline;) {
      for (ControlLoop* loop : std::initializer_list<ControlLoop*>{&scheduler, &jobs}) {
        Status status = loop->RunOnce();
        EXPECT_TRUE(status.ok()) << status.ToString();
      }
      Status status = agent_->RunOnce();
      EXPECT_TRUE(status.ok()) << status.ToString();
      activity = RecordedActivity();
      if (activity.count("notebook") > 0 && activity["notebook"] < 0.2 &&
          activity.count("train") > 0 && activity["train"] > 0.4) {
        break;
      }
      usleep(100 * 1000);
    }
    return activity;
  }

  node::testing::TempDir data_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<node::ProcessRuntime> runtime_;
  std::unique_ptr<cluster::Cache> cache_;
  std::unique_ptr<node::NodeAgent> agent_;
};

TEST_F(IdleGpuTest, ASleepingJobIsReportedIdleAndWarnedAndASpinningOneIsNot) {
  std::map<std::string, double> activity = RunUntilMeasured();
  ASSERT_EQ(activity.count("notebook"), 1u);
  ASSERT_EQ(activity.count("train"), 1u);
  EXPECT_LT(activity["notebook"], 0.2);
  EXPECT_GT(activity["train"], 0.4);

  // The GPUs' readings (DCGM_FI_DEV_GPU_UTIL) and the jobs' busy shares follow.
  auto cluster = std::make_shared<observe::ClusterObjectsCache>(*cache_);
  Result<std::shared_ptr<const observe::ClusterObjects>> objects = cluster->Get();
  ASSERT_TRUE(objects) << objects.error().ToString();
  std::vector<observe::GpuSample> samples = observe::ClusterGpuSamples(**objects, {});
  std::map<std::string, double> utilization;
  for (const observe::GpuSample& sample : samples) {
    for (const observe::GpuHolder& holder : sample.holders) {
      utilization[holder.job] = sample.reading.utilization_percent;
    }
  }
  EXPECT_LT(utilization["notebook"], 20);
  EXPECT_GT(utilization["train"], 40);
  for (const observe::JobGpuUse& use : observe::JobGpuUses(samples)) {
    EXPECT_EQ(use.gpus, 1);
    if (use.job == "notebook") {
      EXPECT_LT(use.busy, 0.2);
    } else {
      EXPECT_GT(use.busy, 0.4) << use.job;
    }
  }

  // Idle reclaim: under the threshold for the queue's ten minutes, the sleeping job is warned.
  FakeClock idle_clock;
  IdleReclaimLoop idle(*store_, *cache_, cluster, idle_clock);
  ASSERT_TRUE(idle.RunOnce().ok());
  idle_clock.Advance(11min);
  ASSERT_TRUE(idle.RunOnce().ok());
  Result<std::vector<cluster::Stored<api::Event>>> events =
      cluster::ListStored<api::Event>(*store_, "Event");
  ASSERT_TRUE(events) << events.error().ToString();
  std::map<std::string, int> warned;
  for (const cluster::Stored<api::Event>& event : *events) {
    if (event.value.reason != observe::kIdleEventReason) continue;
    EXPECT_EQ(event.value.type, "Warning");
    EXPECT_THAT(event.value.message, HasSubstr("under the queue's 30 % threshold"));
    ++warned[event.value.involved_object.name];
  }
  EXPECT_EQ(warned["notebook"], 1);
  EXPECT_EQ(warned.count("train"), 0u);
}

}  // namespace
}  // namespace strata::controller
