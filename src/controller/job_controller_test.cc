#include "controller/job_controller.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/torchrun_env.h"
#include "controller/controller_test_support.h"
#include "controller/training_pod.h"

namespace strata::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using testing::TestCluster;

std::string Job(const std::string& name, int replicas, int max_restarts,
                const std::string& clean_pod_policy = "Running") {
  return fmt::format(R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {{name: {}, namespace: default}}
spec:
  replicas: {}
  procPerNode: 2
  maxRestarts: {}
  cleanPodPolicy: {}
  resources: {{cpu: "8", memory: 64Gi, gpu: 8}}
  template: {{command: [python, train.py]}}
)",
                     name, replicas, max_restarts, clean_pod_policy);
}

std::vector<std::string> EventReasons(const TestCluster& cluster, const std::string& job) {
  std::vector<std::string> out;
  for (const api::Event& event : cluster.Events()) {
    if (event.involved_object.kind == "Job" && event.involved_object.name == job) {
      out.push_back(event.reason);
    }
  }
  return out;
}

// Job "train" of 2 pods (maxRestarts 2) bound to two 8-GPU nodes, its pods running.
void StartTrainJob(TestCluster& cluster) {
  cluster.AddNode("node-a", 8);
  cluster.AddNode("node-b", 8);
  cluster.Apply(Job("train", 2, 2));
  cluster.Reconcile(1);
  cluster.StartBoundPods();
  cluster.Reconcile(1);
}

TEST(JobControllerTest, RunsAJobToSuccessAndReleasesEveryGpu) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.AddNode("node-b", 8);
  cluster.Apply(Job("train", 2, 0));
  cluster.Reconcile(1);
  EXPECT_EQ(cluster.Job("train").phase, api::JobPhase::kPending);
  EXPECT_THAT(cluster.JobPods("train"), SizeIs(2));
  EXPECT_EQ(cluster.GpusHeld(), 16);

  cluster.StartBoundPods();
  cluster.Reconcile(1);
  api::JobStatus running = cluster.Job("train");
  EXPECT_EQ(running.phase, api::JobPhase::kRunning);
  EXPECT_FALSE(running.start_time.empty());

  cluster.SetPodPhase("train-worker-0", "Succeeded", 0);
  cluster.Reconcile(1);
  EXPECT_EQ(cluster.Job("train").phase, api::JobPhase::kRunning);
  cluster.SetPodPhase("train-worker-1", "Succeeded", 0);
  cluster.Reconcile(1);

  api::JobStatus done = cluster.Job("train");
  EXPECT_EQ(done.phase, api::JobPhase::kSucceeded);
  EXPECT_FALSE(done.completion_time.empty());
  EXPECT_EQ(cluster.GpusHeld(), 0);
  EXPECT_THAT(cluster.JobPods("train"), SizeIs(2));  // cleanPodPolicy Running keeps them
  EXPECT_THAT(EventReasons(cluster, "train"),
              ::testing::IsSupersetOf({"Scheduled", "Running", "Succeeded"}));
}

TEST(JobControllerTest, CleanPodPolicyAllDeletesEveryPod) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.Apply(Job("train", 1, 0, "All"));
  cluster.Reconcile(1);
  cluster.StartBoundPods();
  cluster.SetPodPhase("train-worker-0", "Succeeded", 0);
  cluster.Reconcile(2);
  EXPECT_EQ(cluster.Job("train").phase, api::JobPhase::kSucceeded);
  EXPECT_THAT(cluster.JobPods("train"), SizeIs(0));
}

TEST(JobControllerTest, ASuccessRoleEndsTheJobAndTheOtherRolesPodsAreStopped) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.AddNode("node-b", 8);
  cluster.Apply(R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: driver, namespace: default}
spec:
  successPolicy: {roles: [driver]}
  roles:
  - name: driver
    resources: {cpu: "1", memory: 1Gi}
    template: {command: [python, drive.py]}
  - name: worker
    replicas: 2
    resources: {cpu: "8", memory: 64Gi, gpu: 8}
    template: {command: [python, work.py]}
)");
  cluster.Reconcile(1);
  cluster.StartBoundPods();
  cluster.Reconcile(1);
  EXPECT_EQ(cluster.Job("driver").phase, api::JobPhase::kRunning);
  // The driver (rank 0) ends the job while its workers still run.
  cluster.SetPodPhase("driver-worker-0", "Succeeded", 0);
  cluster.Reconcile(1);
  EXPECT_EQ(cluster.Job("driver").phase, api::JobPhase::kSucceeded);
  EXPECT_EQ(cluster.Job("driver").message, "every pod of role(s) driver succeeded");
  EXPECT_EQ(api::StopRequested(cluster.Pod("driver-worker-1")), api::kStopJobFinished);
  EXPECT_EQ(api::StopRequested(cluster.Pod("driver-worker-2")), api::kStopJobFinished);
}

TEST(JobControllerTest, TheRestartNamesThePodThatFailedFirstNotItsKnockOn) {
  TestCluster cluster;
  StartTrainJob(cluster);
  // Rank 1 is killed; rank 0 exits after it, having lost its peer, before the controller looks.
  cluster.SetPodPhase("train-worker-1", "Failed", 137);
  cluster.SetPodPhase("train-worker-0", "Failed", 1);
  cluster.Reconcile(1);
  EXPECT_THAT(cluster.Job("train").message, HasSubstr("train-worker-1 failed with exit code 137"));
}

TEST(JobControllerTest, TheRestartNamesThePodWhoseProcessEndedFirstEvenWhenWrittenLater) {
  TestCluster cluster;
  StartTrainJob(cluster);
  // The agent writes rank 0's knock-on failure first, but rank 1's process ended before it.
  auto fail = [&](const std::string& pod, int exit_code, const std::string& finished_at) {
    cluster.SetPodPhase(pod, "Failed", exit_code);
    cluster.UpdatePod(pod, [&](api::Pod& value) {
      value.metadata.annotations[api::kFinishedAtAnnotation] = finished_at;
    });
  };
  fail("train-worker-0", 1, "2026-01-02T03:04:05.200000Z");
  fail("train-worker-1", 137, "2026-01-02T03:04:05.100000Z");
  cluster.Reconcile(1);
  EXPECT_THAT(cluster.Job("train").message, HasSubstr("train-worker-1 failed with exit code 137"));
}

TEST(JobControllerTest, AFailedPodRestartsTheWholeGroupUpToMaxRestartsThenFails) {
  TestCluster cluster;
  StartTrainJob(cluster);

  for (int restart = 1; restart <= 2; ++restart) {
    cluster.SetPodPhase("train-worker-1", "Failed", 1);
    cluster.Reconcile(1);
    api::JobStatus restarting = cluster.Job("train");
    EXPECT_EQ(restarting.phase, api::JobPhase::kRestarting);
    EXPECT_THAT(restarting.message, HasSubstr("train-worker-1 failed with exit code 1"));
    // The healthy pod is stopped too: the whole group restarts.
    EXPECT_EQ(api::StopRequested(cluster.Pod("train-worker-0")), api::kStopGroupRestart);

    cluster.StopMarkedPods();
    cluster.Reconcile(2);
    EXPECT_EQ(cluster.Job("train").restart_count, restart);
    std::vector<api::Pod> pods = cluster.JobPods("train");
    ASSERT_THAT(pods, SizeIs(2));
    Result<api::TrainingPod> training = api::TrainingPodFromPod(pods[0]);
    ASSERT_TRUE(training.has_value());
    Result<std::vector<api::Environment>> env = api::BuildWorkerEnvironments(*training);
    ASSERT_TRUE(env.has_value());
    EXPECT_EQ((*env)[0].at("TORCHELASTIC_RESTART_COUNT"), std::to_string(restart));
    EXPECT_EQ((*env)[0].at("TORCHELASTIC_MAX_RESTARTS"), "2");

    cluster.StartBoundPods();
    cluster.Reconcile(1);
    EXPECT_EQ(cluster.Job("train").phase, api::JobPhase::kRunning);
  }

  cluster.SetPodPhase("train-worker-0", "Failed", 2);
  cluster.Reconcile(1);
  api::JobStatus failed = cluster.Job("train");
  EXPECT_EQ(failed.phase, api::JobPhase::kFailed);
  EXPECT_EQ(failed.reason, "MaxRestartsExceeded");
  EXPECT_EQ(failed.restart_count, 2);
  EXPECT_EQ(api::StopRequested(cluster.Pod("train-worker-1")), api::kStopJobFailed);

  cluster.StopMarkedPods();
  cluster.Reconcile(2);
  EXPECT_EQ(cluster.GpusHeld(), 0);
  // cleanPodPolicy Running: the pod stopped at the end is deleted, the failed one kept.
  std::vector<api::Pod> left = cluster.JobPods("train");
  ASSERT_THAT(left, SizeIs(1));
  EXPECT_EQ(left[0].metadata.name, "train-worker-0");
  EXPECT_THAT(EventReasons(cluster, "train"), ::testing::Contains("Failed"));
}

TEST(JobControllerTest, RecordsTheNewestCheckpointThePodsReport) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.Apply(Job("train", 1, 0));
  cluster.Reconcile(1);
  cluster.StartBoundPods();
  TimePoint when = cluster.clock.Now() + std::chrono::minutes(5);
  cluster.AdvanceWithHeartbeats(std::chrono::minutes(6));
  cluster.ReportCheckpoint("train-worker-0", when);
  cluster.Reconcile(1);
  EXPECT_EQ(cluster.Job("train").last_checkpoint_time, FormatRfc3339(when));
}

TEST(JobControllerTest, StopsAndThenDeletesThePodsOfADeletedJob) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.Apply(Job("train", 1, 0));
  cluster.Reconcile(1);
  cluster.StartBoundPods();
  ASSERT_TRUE(cluster.store->Delete({"Job", "default", "train"}).has_value());
  cluster.Reconcile(1);
  EXPECT_EQ(api::StopRequested(cluster.Pod("train-worker-0")), api::kStopJobDeleted);
  cluster.StopMarkedPods();
  cluster.Reconcile(1);
  EXPECT_THAT(cluster.Pods(), SizeIs(0));
}

TEST(JobControllerTest, AnEvictionRequeuesTheWholeJobOffItsNodeWithoutCountingARestart) {
  TestCluster cluster;
  StartTrainJob(cluster);
  cluster.AddNode("node-c", 8);
  // kubectl drain node-a: the node is cordoned, then its pod evicted.
  store::Object node_a = *cluster.store->Get({"Node", "", "node-a"});
  node_a.body["spec"]["unschedulable"] = true;
  ASSERT_TRUE(cluster.store->Update(node_a).has_value());
  std::string on_a;
  for (const api::Pod& pod : cluster.JobPods("train")) {
    if (pod.spec.node_name == "node-a") on_a = pod.metadata.name;
  }
  ASSERT_FALSE(on_a.empty());
  cluster.UpdatePod(
      on_a, [](api::Pod& pod) { RequestStop(pod, api::kStopEvicted, "evicted from node node-a"); });
  cluster.Reconcile(1);
  for (const api::Pod& pod : cluster.JobPods("train")) {
    EXPECT_EQ(api::StopRequested(pod), api::kStopEvicted) << pod.metadata.name;
  }

  cluster.StopMarkedPods();
  cluster.Reconcile(3);
  api::JobStatus requeued = cluster.Job("train");
  EXPECT_EQ(requeued.restart_count, 0);
  EXPECT_EQ(requeued.preemption_count, 0);
  std::vector<api::Pod> pods = cluster.JobPods("train");
  ASSERT_THAT(pods, SizeIs(2));
  for (const api::Pod& pod : pods) {
    EXPECT_NE(pod.spec.node_name, "node-a") << pod.metadata.name;
    EXPECT_EQ(api::StopRequested(pod), "") << pod.metadata.name;
  }
  EXPECT_THAT(EventReasons(cluster, "train"), ::testing::Contains("Requeued"));
}

}  // namespace
}  // namespace strata::controller
