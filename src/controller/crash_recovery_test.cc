// Every reconciler is correct if its process dies between any two of its writes: each scenario
// runs for every N up to its write count with the process dying at the Nth write, restarts on
// the same store, and must end where the run without faults ends (crash_harness.h).

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "api/manifest.h"
#include "cluster/indexes.h"
#include "common/check.h"
#include "controller/crash_harness.h"
#include "controller/idle_reclaim.h"
#include "controller/job_controller.h"
#include "controller/node_controller.h"
#include "controller/scheduler_loop.h"
#include "controller/service_controller.h"
#include "controller/training_pod.h"
#include "observe/cluster_objects_cache.h"

namespace strata::controller {
namespace {

using testing::CrashRun;
using testing::CrashScenario;
using testing::Process;

// --- The world around the loops ------------------------------------------------------------

void Put(store::Store& store, const api::Object& object) {
  store::ObjectKey key{std::string(object.kind()), object.namespace_name(), object.name()};
  Result<store::Object> current = store.Get(key);
  Result<store::Object> written = current ? store.Update(cluster::EncodeForStore(object, *current))
                                          : store.Create(cluster::EncodeForStore(object));
  STRATA_CHECK(written.has_value());
}

void Apply(store::Store& store, const std::string& yaml) {
  Result<std::vector<api::Object>> objects = api::DecodeManifests({{"scenario.yaml", yaml}});
  STRATA_CHECK(objects.has_value());
  for (const api::Object& object : *objects) Put(store, object);
}

void AddNode(store::Store& store, const std::string& name, int gpus, TimePoint now) {
  std::string gpu_list;
  for (int i = 0; i < gpus; ++i) {
    gpu_list += fmt::format(
        "    - {{index: {}, uuid: GPU-{}-{}, model: H100-80GB, memory: 80Gi}}\n", i, name, i);
  }
  Apply(store, fmt::format(R"(apiVersion: strata.dev/v1alpha1
kind: Node
metadata: {{name: {}, labels: {{topology.strata.dev/rack: r0}}}}
status:
  capacity: {{cpu: 128, memory: 1Ti}}
  gpus:
{}  conditions: [{{type: Ready, status: "True", lastHeartbeatTime: "{}"}}]
)",
                           name, gpu_list, FormatRfc3339(now)));
}

std::vector<cluster::Stored<api::Pod>> Pods(store::Store& store) {
  Result<std::vector<cluster::Stored<api::Pod>>> pods = cluster::ListStored<api::Pod>(store, "Pod");
  STRATA_CHECK(pods.has_value());
  return std::move(*pods);
}

void UpdatePod(store::Store& store, const cluster::Stored<api::Pod>& stored, const api::Pod& pod) {
  // The world writes what it saw; a conflict means a loop wrote first, and the next pass sees it.
  Result<store::Object> written =
      store.Update(cluster::EncodeForStore(api::Object(pod), stored.raw));
  (void)written;
}

// The node agents' part: bound pods start, run for `run_for` and succeed, unless `fails` says a
// running pod fails now; pods marked for stopping end with SIGTERM's exit code; a service
// replica's leader gets its endpoint and, once running, passes its readiness probe.
struct Agents {
  Duration run_for = std::chrono::seconds(3);
  std::function<bool(const api::Pod&, Duration running)> fails;

  void operator()(store::Store& store, FakeClock& clock, int) const {
    const TimePoint now = clock.Now();
    for (const auto& stored : Pods(store)) {
      api::Pod pod = stored.value;
      if (pod.spec.node_name.empty() || api::PodTerminal(pod)) continue;
      if (!api::StopRequested(pod).empty()) {
        pod.status.phase = api::PodPhase::kFailed;
        pod.status.exit_code = 143;
      } else if (pod.status.phase == api::PodPhase::kPending) {
        pod.status.phase = api::PodPhase::kRunning;
        pod.metadata.annotations[api::kStartedAtAnnotation] = FormatRfc3339(now);
        if (pod.spec.owner.kind == "Service" && pod.spec.owner.rank == 0) {
          pod.metadata.annotations[api::kEndpointAnnotation] =
              fmt::format("127.0.0.1:{}", 9000 + pod.spec.owner.replica);
        }
      } else {
        const Duration running =
            now - ParseRfc3339(*api::PodAnnotation(pod, api::kStartedAtAnnotation)).value();
        if (pod.spec.owner.kind == "Service") {
          if (pod.spec.owner.rank != 0 || api::PodAnnotation(pod, api::kReadyAtAnnotation))
            continue;
          pod.metadata.annotations[api::kReadyAtAnnotation] = FormatRfc3339(now);
        } else if (fails && fails(pod, running)) {
          pod.status.phase = api::PodPhase::kFailed;
          pod.status.exit_code = 1;
        } else if (running >= run_for) {
          pod.status.phase = api::PodPhase::kSucceeded;
          pod.status.exit_code = 0;
        } else {
          continue;
        }
      }
      UpdatePod(store, stored, pod);
    }
  }
};

template <typename Loop, typename... Args>
void Add(Process& process, Args&&... args) {
  process.loops.push_back(std::make_unique<Loop>(std::forward<Args>(args)...));
}

Process SchedulerAndJobs(store::Store& store, FakeClock& clock) {
  Process process;
  process.cache = std::make_unique<cluster::Cache>(store, cluster::ControlPlaneCacheOptions());
  Add<SchedulerLoop>(process, store, *process.cache, clock);
  Add<JobController>(process, store, *process.cache, clock);
  return process;
}

std::string JobYaml(const std::string& name, int replicas, int gpus, int priority,
                    int max_restarts) {
  return fmt::format(R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {{name: {}, namespace: default}}
spec:
  replicas: {}
  maxRestarts: {}
  priority: {}
  queue: team
  resources: {{gpu: {}}}
  template: {{command: [python, train.py]}}
)",
                     name, replicas, max_restarts, priority, gpus);
}

constexpr char kQueue[] = R"(apiVersion: strata.dev/v1alpha1
kind: Queue
metadata: {name: team}
spec:
  preemption: {withinQueue: LowerPriority}
)";

// --- The scenarios -------------------------------------------------------------------------

CrashScenario GangBind() {
  CrashScenario s;
  s.name = "a 2 x 8 gang is bound whole, runs and succeeds";
  s.setup = [](store::Store& store, FakeClock& clock) {
    AddNode(store, "node-a", 8, clock.Now());
    AddNode(store, "node-b", 8, clock.Now());
    Apply(store, kQueue);
    Apply(store, JobYaml("train", 2, 8, 0, 0));
  };
  s.start = SchedulerAndJobs;
  s.world = Agents{};
  s.passes = 12;
  return s;
}

CrashScenario GroupRestart() {
  CrashScenario s;
  s.name = "a rank fails once: the whole group restarts and succeeds";
  s.setup = [](store::Store& store, FakeClock& clock) {
    AddNode(store, "node-a", 8, clock.Now());
    AddNode(store, "node-b", 8, clock.Now());
    Apply(store, kQueue);
    Apply(store, JobYaml("train", 2, 8, 0, 2));
  };
  s.start = SchedulerAndJobs;
  Agents agents;
  agents.fails = [](const api::Pod& pod, Duration running) {
    return pod.spec.owner.rank == 1 &&
           *api::PodAnnotation(pod, api::kRestartCountAnnotation) == "0" &&
           running >= std::chrono::seconds(1);
  };
  s.world = agents;
  s.passes = 20;
  return s;
}

CrashScenario Preemption() {
  CrashScenario s;
  s.name = "a higher-priority job preempts a running one, which runs again after it";
  s.setup = [](store::Store& store, FakeClock& clock) {
    AddNode(store, "node-a", 8, clock.Now());
    Apply(store, kQueue);
    Apply(store, JobYaml("low", 1, 8, 0, 0));
  };
  s.start = SchedulerAndJobs;
  Agents agents;
  agents.run_for = std::chrono::seconds(4);
  s.world = [agents](store::Store& store, FakeClock& clock, int pass) {
    agents(store, clock, pass);
    if (pass == 2) Apply(store, JobYaml("high", 1, 8, 10, 0));
  };
  s.passes = 24;
  return s;
}

CrashScenario PodGang() {
  CrashScenario s;
  s.name = "a gang of three standalone pods is bound whole";
  s.setup = [](store::Store& store, FakeClock& clock) {
    AddNode(store, "node-a", 8, clock.Now());
    AddNode(store, "node-b", 8, clock.Now());
    for (int i = 0; i < 3; ++i) {
      Apply(store, fmt::format(R"(apiVersion: strata.dev/v1alpha1
kind: Pod
metadata: {{name: member-{}, namespace: default}}
spec:
  restartPolicy: Never
  resources: {{gpu: 4}}
  gang: {{name: trio, minMember: 3}}
  template: {{command: [python, work.py]}}
)",
                               i));
    }
  };
  s.start = [](store::Store& store, FakeClock& clock) {
    Process process;
    process.cache = std::make_unique<cluster::Cache>(store, cluster::ControlPlaneCacheOptions());
    Add<SchedulerLoop>(process, store, *process.cache, clock);
    return process;
  };
  s.world = Agents{};
  s.passes = 10;
  return s;
}

// An autoscaler that wants 2 replicas for the first 8 s, then 1.
class ScheduleScaler final : public ReplicaScaler {
 public:
  explicit ScheduleScaler(const Clock& clock) : clock_(clock) {}
  ScaleAdvice Advise(const api::Service&, const api::ServiceVersion&,
                     const VersionReplicas&) override {
    const bool early = clock_.Now() - FakeClock::kDefaultStart < std::chrono::seconds(8);
    return {early ? 2 : 1, early ? "the burst" : "after the burst"};
  }

 private:
  const Clock& clock_;
};

// The service controller with its scaler, as one loop.
class ServiceLoop final : public ControlLoop {
 public:
  ServiceLoop(store::Store& store, cluster::Cache& cache, const Clock& clock)
      : scaler_(clock), controller_(store, cache, clock, {}, nullptr, &scaler_) {}
  Status RunOnce() override { return controller_.RunOnce(); }

 private:
  ScheduleScaler scaler_;
  ServiceController controller_;
};

CrashScenario ServiceLifecycle() {
  CrashScenario s;
  s.name = "a TP=2 service scales 0 -> 2 -> 1, drains, rolls out a new template, is deleted";
  s.setup = [](store::Store& store, FakeClock& clock) {
    AddNode(store, "node-a", 4, clock.Now());
    AddNode(store, "node-b", 4, clock.Now());
    Apply(store, R"(apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: llm, namespace: default}
spec:
  model: llama
  engine: {command: [strata, engine-sim, --model, llama]}
  resources: {gpu: 2}
  tensorParallel: 2
  minReplicas: 0
  maxReplicas: 3
)");
  };
  s.start = [](store::Store& store, FakeClock& clock) {
    Process process;
    process.cache = std::make_unique<cluster::Cache>(store, cluster::ControlPlaneCacheOptions());
    Add<ServiceLoop>(process, store, *process.cache, clock);
    Add<SchedulerLoop>(process, store, *process.cache, clock);
    return process;
  };
  Agents agents;
  s.world = [agents](store::Store& store, FakeClock& clock, int pass) {
    agents(store, clock, pass);
    if (pass == 12) {
      // A user changes the engine: a rolling update.
      Apply(store, R"(apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: llm, namespace: default}
spec:
  model: llama
  engine: {command: [strata, engine-sim, --model, llama, --max-num-seqs, "64"]}
  resources: {gpu: 2}
  tensorParallel: 2
  minReplicas: 0
  maxReplicas: 3
)");
    }
    // And deletes the service: its replicas drain and go.
    if (pass == 22) {
      Result<store::Object> deleted = store.Delete({"Service", "default", "llm"});
      (void)deleted;
    }
  };
  s.passes = 30;
  return s;
}

CrashScenario LostNode() {
  CrashScenario s;
  s.name = "a node stops heartbeating: its pods fail and the job restarts on the others";
  s.setup = [](store::Store& store, FakeClock& clock) {
    AddNode(store, "node-a", 8, clock.Now());
    AddNode(store, "node-b", 8, clock.Now());
    AddNode(store, "node-c", 8, clock.Now());
    Apply(store, kQueue);
    Apply(store, JobYaml("train", 2, 8, 0, 1));
  };
  s.start = [](store::Store& store, FakeClock& clock) {
    Process process = SchedulerAndJobs(store, clock);
    NodeControllerOptions options;
    options.grace_period = std::chrono::seconds(4);
    Add<NodeController>(process, store, *process.cache, clock, options);
    return process;
  };
  Agents agents;
  agents.run_for = std::chrono::seconds(12);
  s.world = [agents](store::Store& store, FakeClock& clock, int pass) {
    agents(store, clock, pass);
    // node-a's agent is gone from pass 3 on; the others heartbeat.
    for (const char* name : {"node-a", "node-b", "node-c"}) {
      if (pass >= 3 && std::string(name) == "node-a") continue;
      Result<store::Object> raw = store.Get({"Node", "", name});
      std::optional<cluster::Stored<api::Node>> node;
      if (raw) {
        Result<api::Object> decoded = cluster::DecodeStoredObject(*raw);
        if (decoded && decoded->As<api::Node>()) node = {*raw, *decoded->As<api::Node>()};
      }
      if (!node) continue;
      for (api::NodeCondition& c : node->value.status.conditions) {
        if (c.type != "Ready") continue;
        c.status = "True";
        c.last_heartbeat_time = FormatRfc3339(clock.Now());
      }
      Result<store::Object> written =
          store.Update(cluster::EncodeForStore(api::Object(node->value), node->raw));
      (void)written;
    }
  };
  s.passes = 30;
  return s;
}

CrashScenario IdleReclaim() {
  CrashScenario s;
  s.name = "an idle job is warned about and marked reclaimable";
  s.setup = [](store::Store& store, FakeClock& clock) {
    AddNode(store, "node-a", 8, clock.Now());
    Apply(store, R"(apiVersion: strata.dev/v1alpha1
kind: Queue
metadata:
  name: team
  annotations: {strata.dev/idle-threshold: "30%", strata.dev/idle-after: 3s, strata.dev/idle-reclaim: "true"}
)");
    Apply(store, JobYaml("notebook", 1, 8, 0, 0));
    Apply(store, JobYaml("other", 1, 0, 0, 0));
  };
  s.start = [](store::Store& store, FakeClock& clock) {
    Process process = SchedulerAndJobs(store, clock);
    auto objects = std::make_shared<observe::ClusterObjectsCache>(*process.cache);
    Add<IdleReclaimLoop>(process, store, *process.cache, objects, clock, [] {
      // The real GPUs read idle.
      observe::GpuReadingsByUuid readings;
      for (int i = 0; i < 8; ++i) {
        observe::GpuReading reading;
        reading.utilization_percent = 2;
        readings["GPU-node-a-" + std::to_string(i)] = reading;
      }
      return readings;
    });
    return process;
  };
  Agents agents;
  agents.run_for = std::chrono::hours(1);
  s.world = agents;
  s.passes = 12;
  return s;
}

// --- The tests -----------------------------------------------------------------------------

class CrashRecoveryTest : public ::testing::TestWithParam<CrashScenario (*)()> {};

TEST_P(CrashRecoveryTest, EveryCrashBetweenTwoWritesConvergesToTheEndWithoutFaults) {
  const CrashScenario scenario = GetParam()();
  SCOPED_TRACE(scenario.name);
  const CrashRun clean = testing::RunScenario(scenario, 0);
  ASSERT_GT(clean.writes, 0);
  ASSERT_FALSE(clean.died);
  // The fault-free run is settled: running it for longer changes nothing.
  for (int64_t n = 1; n <= clean.writes; ++n) {
    const CrashRun crashed = testing::RunScenario(scenario, n);
    ASSERT_TRUE(crashed.died) << "write " << n;
    ASSERT_EQ(crashed.end_state, clean.end_state)
        << "the process died at write " << n << " of " << clean.writes;
  }
}

INSTANTIATE_TEST_SUITE_P(Reconcilers, CrashRecoveryTest,
                         ::testing::Values(&GangBind, &GroupRestart, &Preemption, &PodGang,
                                           &ServiceLifecycle, &LostNode, &IdleReclaim));

TEST(CrashRecoveryTest, AProcessKilledForRealAtEveryWriteOfAGroupRestartConverges) {
  const CrashScenario scenario = GroupRestart();
  const CrashRun clean = testing::RunScenario(scenario, 0);
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("strata-crash-" + std::to_string(getpid())))
          .string();
  for (int64_t n = 1; n <= clean.writes; ++n) {
    const CrashRun crashed = testing::RunScenarioWithRealExit(scenario, n, dir);
    ASSERT_TRUE(crashed.died) << "write " << n;
    ASSERT_EQ(crashed.end_state, clean.end_state)
        << "the process was killed at write " << n << " of " << clean.writes;
  }
  std::filesystem::remove_all(dir);
}

TEST(CrashRecoveryTest, TheScenariosEndWhereTheyShould) {
  // The end states the crash runs are compared with are themselves right.
  const CrashRun bind = testing::RunScenario(GangBind(), 0);
  EXPECT_THAT(bind.end_state, ::testing::HasSubstr("\"phase\":\"Succeeded\""));
  const CrashRun restart = testing::RunScenario(GroupRestart(), 0);
  EXPECT_THAT(restart.end_state, ::testing::HasSubstr("\"restartCount\":1"));
  EXPECT_THAT(restart.end_state, ::testing::HasSubstr("\"phase\":\"Succeeded\""));
  const CrashRun preempted = testing::RunScenario(Preemption(), 0);
  EXPECT_THAT(preempted.end_state, ::testing::HasSubstr("\"preemptionCount\":1"));
  const CrashRun service = testing::RunScenario(ServiceLifecycle(), 0);
  EXPECT_THAT(service.end_state, ::testing::Not(::testing::HasSubstr("Pod \"default/llm")))
      << "the deleted service's replicas are gone";
  const CrashRun idle = testing::RunScenario(IdleReclaim(), 0);
  EXPECT_THAT(idle.end_state, ::testing::HasSubstr("\"strata.dev/reclaimable\":\"true\""));
}

}  // namespace
}  // namespace strata::controller
