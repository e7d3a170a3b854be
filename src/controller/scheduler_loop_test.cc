#include "controller/scheduler_loop.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "api/torchrun_env.h"
#include "controller/controller_test_support.h"
#include "controller/training_pod.h"

namespace strata::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;
using testing::TestCluster;

std::string TrainingJob(const std::string& name, int replicas, int gpus, int priority = 0,
                        const std::string& queue = "") {
  return fmt::format(R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {{name: {}, namespace: default}}
spec:
  replicas: {}
  procPerNode: {}
  priority: {}
  {}
  resources: {{cpu: "8", memory: 64Gi, gpu: {}}}
  template: {{command: [python, train.py]}}
)",
                     name, replicas, gpus, priority, queue.empty() ? "" : "queue: " + queue, gpus);
}

TEST(SchedulerLoopTest, PlacesTheWholeGangWithTheTorchrunContract) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.AddNode("node-b", 8);
  cluster.Apply(TrainingJob("train", 2, 8));
  cluster.Reconcile(1);

  std::vector<api::Pod> pods = cluster.JobPods("train");
  ASSERT_THAT(pods, SizeIs(2));
  EXPECT_EQ(cluster.GpusHeld(), 16);
  const api::Pod& rank0 = pods[0].spec.owner.replica == 0 ? pods[0] : pods[1];
  const api::Pod& rank1 = pods[0].spec.owner.replica == 0 ? pods[1] : pods[0];
  EXPECT_NE(rank0.spec.node_name, rank1.spec.node_name);
  EXPECT_THAT(rank0.spec.assigned_gpus, SizeIs(8));

  Result<api::TrainingPod> training = api::TrainingPodFromPod(rank1);
  ASSERT_TRUE(training.has_value()) << training.error().ToString();
  EXPECT_EQ(training->master_addr, rank0.spec.node_name);
  EXPECT_EQ(training->master_port, kFirstMasterPort);
  Result<std::vector<api::Environment>> env = api::BuildWorkerEnvironments(*training);
  ASSERT_TRUE(env.has_value()) << env.error().ToString();
  ASSERT_THAT(*env, SizeIs(8));
  EXPECT_EQ((*env)[3].at("WORLD_SIZE"), "16");
  EXPECT_EQ((*env)[3].at("RANK"), "11");
  EXPECT_EQ((*env)[3].at("PET_NODE_RANK"), "1");
  EXPECT_EQ((*env)[3].at("TORCHELASTIC_RESTART_COUNT"), "0");

  api::JobStatus status = cluster.Job("train");
  ASSERT_NE(status.FindCondition("Scheduled"), nullptr);
  EXPECT_EQ(status.FindCondition("Scheduled")->status, "True");
}

TEST(SchedulerLoopTest, TwoTeamsNeverDeadlockOnPartialGangs) {
  TestCluster cluster;
  for (int i = 0; i < 6; ++i) cluster.AddNode(fmt::format("node-{}", i), 8);
  cluster.Apply(TrainingJob("team-a", 4, 8));
  cluster.Apply(TrainingJob("team-b", 4, 8));
  cluster.Reconcile(2);

  const size_t a = cluster.JobPods("team-a").size();
  const size_t b = cluster.JobPods("team-b").size();
  EXPECT_TRUE((a == 4 && b == 0) || (a == 0 && b == 4)) << a << " and " << b;
  EXPECT_EQ(cluster.GpusHeld(), 32);
  const std::string first = a == 4 ? "team-a" : "team-b";
  const std::string second = a == 4 ? "team-b" : "team-a";
  EXPECT_EQ(cluster.Job(second).phase, api::JobPhase::kPending);
  EXPECT_THAT(cluster.Job(second).message, HasSubstr("nodes are available"));

  cluster.StartBoundPods();
  cluster.Reconcile(1);
  for (const api::Pod& pod : cluster.JobPods(first)) {
    cluster.SetPodPhase(pod.metadata.name, "Succeeded", 0);
  }
  cluster.Reconcile(2);
  EXPECT_EQ(cluster.Job(first).phase, api::JobPhase::kSucceeded);
  EXPECT_THAT(cluster.JobPods(second), SizeIs(4));
  EXPECT_EQ(cluster.GpusHeld(), 32);
}

TEST(SchedulerLoopTest, PreemptsTheVictimWithTheLeastWorkSinceItsCheckpoint) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.AddNode("node-b", 8);
  cluster.Apply(R"(apiVersion: strata.dev/v1alpha1
kind: Queue
metadata: {name: research}
spec:
  preemption: {withinQueue: LowerPriority}
)");
  cluster.Apply(TrainingJob("fresh", 1, 8, 0, "research"));
  cluster.Apply(TrainingJob("stale", 1, 8, 0, "research"));
  cluster.Reconcile(1);
  cluster.StartBoundPods();
  cluster.Reconcile(1);
  ASSERT_EQ(cluster.Job("fresh").phase, api::JobPhase::kRunning);
  ASSERT_EQ(cluster.Job("stale").phase, api::JobPhase::kRunning);

  cluster.AdvanceWithHeartbeats(std::chrono::hours(2));
  // "fresh" checkpointed a minute ago; "stale" never did: preempting "fresh" loses less.
  cluster.ReportCheckpoint("fresh-worker-0", cluster.clock.Now() - std::chrono::minutes(1));
  cluster.Reconcile(1);
  cluster.Apply(TrainingJob("urgent", 1, 8, 100, "research"));
  cluster.Reconcile(1);

  EXPECT_EQ(api::StopRequested(cluster.Pod("fresh-worker-0")), api::kStopPreempted);
  EXPECT_EQ(api::StopRequested(cluster.Pod("stale-worker-0")), "");
  EXPECT_THAT(cluster.JobPods("urgent"), SizeIs(0));  // the victim still holds its GPUs

  cluster.StopMarkedPods();
  cluster.Reconcile(2);
  EXPECT_THAT(cluster.JobPods("urgent"), SizeIs(1));
  EXPECT_THAT(cluster.JobPods("fresh"), SizeIs(0));
  api::JobStatus fresh = cluster.Job("fresh");
  EXPECT_EQ(fresh.phase, api::JobPhase::kPending);
  EXPECT_EQ(fresh.preemption_count, 1);
  EXPECT_EQ(fresh.restart_count, 0);
}

// Applies a Ready GPU-less node `name` with the NoSchedule taint `key`, and a pod `pod` of one
// container asking `limits` (a YAML flow map).
void ApplyTaintedNodeAndPod(TestCluster& cluster, const std::string& name, const std::string& key,
                            const std::string& pod, const std::string& limits) {
  cluster.Apply(fmt::format(R"(apiVersion: strata.dev/v1alpha1
kind: Node
metadata: {{name: {}}}
spec:
  taints: [{{key: {}, effect: NoSchedule}}]
status:
  capacity: {{cpu: 8, memory: 32Gi}}
  conditions: [{{type: Ready, status: "True", lastHeartbeatTime: "2026-01-01T00:00:00Z"}}]
)",
                            name, key));
  cluster.Apply(fmt::format(R"(apiVersion: v1
kind: Pod
metadata: {{name: {}}}
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: busybox
      command: [sleep, "1000"]
      resources: {{limits: {}}}
)",
                            pod, limits));
}

TEST(SchedulerLoopTest, StrataPlacesItsPodsOnANodeTaintedForStrataPodsOnly) {
  // On Kubernetes a plane's own nodes carry the taint that keeps other schedulers' pods off;
  // strata's pods, which that node's agent runs, are placed there as if it were not there.
  TestCluster cluster;
  ApplyTaintedNodeAndPod(cluster, "plane-node", "strata.dev/strata-pods-only", "worker",
                         "{cpu: \"1\"}");
  cluster.Reconcile(1);
  EXPECT_EQ(cluster.Pod("worker").spec.node_name, "plane-node");
}

TEST(SchedulerLoopTest, ExplainsAPendingProbePodInItsStatusAndOneDeduplicatedEvent) {
  TestCluster cluster;
  cluster.AddNode("node-a", 1);
  ApplyTaintedNodeAndPod(cluster, "control", "node-role.kubernetes.io/control-plane", "holder",
                         "{nvidia.com/gpu: 1}");
  cluster.Reconcile(1);
  ASSERT_EQ(cluster.Pod("holder").spec.node_name, "node-a");
  cluster.Apply(R"(apiVersion: v1
kind: Pod
metadata: {name: gpu-probe}
spec:
  restartPolicy: Never
  containers:
    - name: probe
      image: nvidia/cuda:12.4.1-base-ubuntu22.04
      command: [nvidia-smi, -L]
      resources: {limits: {nvidia.com/gpu: 1}}
)");
  cluster.Reconcile(3);

  api::Pod probe = cluster.Pod("gpu-probe");
  EXPECT_EQ(probe.spec.node_name, "");
  EXPECT_THAT(probe.status.message, HasSubstr("0/2 nodes are available"));
  EXPECT_THAT(probe.status.message,
              HasSubstr("untolerated taint {node-role.kubernetes.io/control-plane: }"));
  EXPECT_THAT(probe.status.message, HasSubstr("Insufficient nvidia.com/gpu"));
  EXPECT_FALSE(probe.status.reason.empty());

  auto failed_scheduling = [&] {
    std::vector<api::Event> out;
    for (const api::Event& event : cluster.Events()) {
      if (event.reason == "FailedScheduling" && event.involved_object.name == "gpu-probe") {
        out.push_back(event);
      }
    }
    return out;
  };
  ASSERT_THAT(failed_scheduling(), SizeIs(1));
  EXPECT_EQ(failed_scheduling()[0].count, 1);
  EXPECT_EQ(failed_scheduling()[0].message, probe.status.message);

  cluster.AdvanceWithHeartbeats(std::chrono::minutes(2));
  cluster.Reconcile(2);
  ASSERT_THAT(failed_scheduling(), SizeIs(1));
  EXPECT_EQ(failed_scheduling()[0].count, 2);
  EXPECT_EQ(failed_scheduling()[0].last_timestamp, FormatRfc3339(cluster.clock.Now()));
}

// A pod's nodeSelector (a v1 Pod's, or a Service's given to its replicas) limits its nodes.
TEST(SchedulerLoopTest, APodsNodeSelectorChoosesAmongTheNodes) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8, "r1");
  cluster.AddNode("node-b", 8, "r2");
  for (const char* name : {"one", "two", "three"}) {
    cluster.Apply(std::string(R"(apiVersion: v1
kind: Pod
metadata: {name: )") +
                  name + R"(}
spec:
  restartPolicy: Never
  nodeSelector: {topology.strata.dev/rack: r2}
  containers:
    - name: c
      command: [sleep, "1000"]
      resources: {limits: {nvidia.com/gpu: 1}}
)");
  }
  cluster.Apply(R"(apiVersion: v1
kind: Pod
metadata: {name: nowhere}
spec:
  restartPolicy: Never
  nodeSelector: {topology.strata.dev/rack: r9}
  containers: [{name: c, command: [sleep, "1000"]}]
)");
  cluster.Reconcile(2);
  for (const char* name : {"one", "two", "three"}) {
    EXPECT_EQ(cluster.Pod(name).spec.node_name, "node-b") << name;
  }
  EXPECT_EQ(cluster.Pod("nowhere").spec.node_name, "");
  EXPECT_THAT(cluster.Pod("nowhere").status.message,
              HasSubstr("didn't match Pod's node affinity/selector"));
}

// Pods bound by hand (spec.nodeName and assignedGpus written by a user) may claim GPUs that are
// taken, MIG-enabled or absent: the scheduler neither crashes nor counts them, and goes on.
TEST(SchedulerLoopTest, PodsBoundByHandToGpusThatAreNotFreeDoNotStopTheScheduler) {
  TestCluster cluster;
  cluster.AddNode("node-a", 1);
  cluster.Apply(R"(apiVersion: strata.dev/v1alpha1
kind: Node
metadata: {name: mig-node}
status:
  capacity: {cpu: 8, memory: 32Gi}
  conditions: [{type: Ready, status: "True", lastHeartbeatTime: "2026-01-01T00:00:00Z"}]
  gpus:
    - index: 0
      uuid: GPU-mig-0
      model: A100-40GB
      memory: 40Gi
      migEnabled: true
      migInstances: [{profile: 3g.20gb, uuid: MIG-a}, {profile: 3g.20gb, uuid: MIG-b}]
)");
  cluster.Apply(R"(apiVersion: v1
kind: Pod
metadata: {name: holder}
spec:
  restartPolicy: Never
  containers: [{name: c, command: [sleep, "1000"], resources: {limits: {nvidia.com/gpu: 1}}}]
)");
  cluster.Reconcile(1);
  ASSERT_EQ(cluster.Pod("holder").spec.node_name, "node-a");
  auto bound_pod = [&](const std::string& name, const std::string& node, int index) {
    cluster.Apply("apiVersion: strata.dev/v1alpha1\nkind: Pod\nmetadata: {name: " + name +
                  "}\nspec:\n  nodeName: " + node +
                  "\n  resources: {gpu: 1}\n  assignedGpus: [{index: " + std::to_string(index) +
                  ", uuid: GPU-x}]\n  template: {command: [sleep, \"600\"]}\n");
  };
  bound_pod("taken", "node-a", 0);        // GPU 0 of node-a, which holder has
  bound_pod("whole-mig", "mig-node", 0);  // a whole MIG-enabled GPU
  bound_pod("absent", "node-a", 7);       // a GPU node-a does not have
  cluster.Reconcile(2);
  // The scheduler still places what fits: a CPU-only pod.
  cluster.Apply(R"(apiVersion: v1
kind: Pod
metadata: {name: cpu-only}
spec:
  restartPolicy: Never
  containers: [{name: c, command: [sleep, "1000"]}]
)");
  cluster.Reconcile(2);
  EXPECT_FALSE(cluster.Pod("cpu-only").spec.node_name.empty());
  EXPECT_EQ(cluster.Pod("holder").spec.node_name, "node-a");
}

TEST(SchedulerLoopTest, ExplainsAJobWaitingForQuotaWithTheNumbers) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.Apply(R"(apiVersion: strata.dev/v1alpha1
kind: ResourceFlavor
metadata: {name: h100}
spec: {nodeLabels: {topology.strata.dev/rack: r0}}
---
apiVersion: strata.dev/v1alpha1
kind: Queue
metadata: {name: small}
spec:
  flavors:
    - name: h100
      resources: [{name: gpu, nominal: 4}]
)");
  cluster.Apply(TrainingJob("big", 1, 8, 0, "small"));
  cluster.Reconcile(1);
  api::JobStatus status = cluster.Job("big");
  EXPECT_EQ(status.reason, "WaitingForQuota");
  EXPECT_FALSE(status.message.empty());
  ASSERT_NE(status.FindCondition("Scheduled"), nullptr);
  EXPECT_EQ(status.FindCondition("Scheduled")->status, "False");
  EXPECT_EQ(cluster.GpusHeld(), 0);
}

TEST(SchedulerLoopTest, ExplainsAQueueThatNamesAMissingFlavorNamingTheField) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.Apply(R"(apiVersion: strata.dev/v1alpha1
kind: Queue
metadata: {name: broken}
spec:
  flavors:
    - name: a100
      resources: [{name: gpu, nominal: 4}]
)");
  cluster.Apply(TrainingJob("odd", 1, 1, 0, "broken"));
  cluster.Reconcile(1);
  api::JobStatus status = cluster.Job("odd");
  EXPECT_EQ(status.reason, "Invalid");
  EXPECT_THAT(status.message, HasSubstr("spec.flavors[0].name: no ResourceFlavor \"a100\""));
  EXPECT_THAT(cluster.JobPods("odd"), SizeIs(0));
}

TEST(SchedulerLoopTest, SaysAJobLargerThanTheWholeClusterCanNeverFitWhileAnotherWaitsForRoom) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.AddNode("node-b", 8);
  cluster.Apply(TrainingJob("running", 2, 8));
  cluster.Reconcile(1);
  cluster.Apply(TrainingJob("huge", 10000, 8));
  cluster.Apply(TrainingJob("next", 1, 8));
  cluster.Reconcile(1);
  api::JobStatus huge = cluster.Job("huge");
  EXPECT_EQ(huge.reason, "ExceedsClusterCapacity");
  EXPECT_THAT(huge.message, HasSubstr("can never fit this cluster: 10000 pods of 8 GPUs"));
  EXPECT_THAT(huge.message, HasSubstr("its 2 nodes hold at most 2"));
  // The one that fits an empty cluster waits for room, in other words.
  api::JobStatus next = cluster.Job("next");
  EXPECT_NE(next.reason, "ExceedsClusterCapacity");
  EXPECT_THAT(next.message, Not(HasSubstr("can never fit")));
  EXPECT_THAT(cluster.JobPods("huge"), SizeIs(0));
}

TEST(SchedulerLoopTest, ExplainsABoundedNumberOfWorkloadsPerPassAndTheRestAtTheNextPasses) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.Apply(TrainingJob("running", 1, 8));
  cluster.Reconcile(1);
  for (int i = 0; i < 5; ++i) cluster.Apply(TrainingJob(fmt::format("wait-{}", i), 1, 8));
  SchedulerLoopOptions options;
  options.max_explanations_per_pass = 2;
  SchedulerLoop bounded(*cluster.store, cluster.cache, cluster.clock, options);
  auto explained = [&] {
    int count = 0;
    for (int i = 0; i < 5; ++i) count += !cluster.Job(fmt::format("wait-{}", i)).reason.empty();
    return count;
  };
  ASSERT_TRUE(bounded.RunOnce().ok());
  EXPECT_EQ(explained(), 2);
  // No time passes and nothing else changes: the next passes come for the rest.
  ASSERT_TRUE(bounded.RunOnce().ok());
  EXPECT_EQ(explained(), 4);
  ASSERT_TRUE(bounded.RunOnce().ok());
  EXPECT_EQ(explained(), 5);
}

TEST(SchedulerLoopTest, MeasuresEachCycleWhenGivenARegistry) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.Apply(TrainingJob("train", 1, 8));
  metrics::Registry registry;
  SchedulerLoopOptions options;
  options.registry = &registry;
  SchedulerLoop loop(*cluster.store, cluster.cache, cluster.clock, options);
  ASSERT_TRUE(loop.RunOnce().ok());
  ASSERT_TRUE(loop.RunOnce().ok());
  EXPECT_THAT(registry.RenderText(),
              HasSubstr("strata_scheduler_cycle_duration_seconds_count 2\n"));
}

}  // namespace
}  // namespace strata::controller
