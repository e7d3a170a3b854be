// Jobs of several roles through the scheduler adapter and the job controller: one gang of one
// pod set per role, pods made from their role, roles started in dependency order, and the
// success policy over roles.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/annotations.h"
#include "api/pod_contract.h"
#include "api/torchrun_env.h"
#include "controller/controller_test_support.h"

namespace strata::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::SizeIs;
using testing::TestCluster;

std::vector<std::string> PodNames(const std::vector<api::Pod>& pods) {
  std::vector<std::string> names;
  for (const api::Pod& pod : pods) names.push_back(pod.metadata.name);
  std::sort(names.begin(), names.end());
  return names;
}

// A job whose two initializers must complete before the trainer (two 8-GPU pods) starts, and
// whose trainer alone decides success.
constexpr const char* kInitializedTrainer = R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: tune, namespace: default}
spec:
  successPolicy: {roles: [trainer]}
  roles:
  - name: trainer
    replicas: 2
    procPerNode: 8
    resources: {cpu: "8", memory: 64Gi, gpu: 8}
    template: {command: [torchrun, train.py]}
    dependsOn: [{role: dataset, status: Complete}, {role: model, status: Complete}]
  - name: dataset
    resources: {cpu: "2", memory: 4Gi}
    template: {command: [python, fetch_data.py]}
  - name: model
    resources: {cpu: "2", memory: 4Gi}
    template: {command: [python, fetch_model.py]}
)";

TEST(JobRolesTest, EachPodIsMadeFromItsRoleAndRanksCountAcrossRoles) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.AddNode("node-b", 8);
  cluster.Apply(R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: ps, namespace: default}
spec:
  roles:
  - name: ps
    resources: {cpu: "4", memory: 8Gi}
    template: {command: [python, ps.py]}
  - name: worker
    replicas: 2
    procPerNode: 4
    resources: {cpu: "8", memory: 64Gi, gpu: 8}
    template: {command: [python, worker.py]}
)");
  cluster.Reconcile(1);
  ASSERT_THAT(cluster.JobPods("ps"), SizeIs(3));
  const api::Pod ps = cluster.Pod("ps-worker-0");
  EXPECT_EQ(ps.spec.template_.command, (std::vector<std::string>{"python", "ps.py"}));
  EXPECT_TRUE(ps.spec.assigned_gpus.empty());
  EXPECT_EQ(ps.metadata.annotations.at(api::kRoleAnnotation), "ps");
  const api::Pod worker = cluster.Pod("ps-worker-2");
  EXPECT_EQ(worker.spec.template_.command, (std::vector<std::string>{"python", "worker.py"}));
  EXPECT_THAT(worker.spec.assigned_gpus, SizeIs(8));
  EXPECT_EQ(worker.spec.owner.rank, 2);
  EXPECT_EQ(worker.metadata.annotations.at(api::kRoleAnnotation), "worker");
  EXPECT_EQ(worker.metadata.annotations.at(api::kRoleIndexAnnotation), "1");
  EXPECT_EQ(worker.metadata.annotations.at(api::kProcPerNodeAnnotation), "4");
  EXPECT_EQ(worker.metadata.annotations.at(api::kWorldSizeAnnotation), "9");
  EXPECT_EQ(worker.metadata.annotations.at(api::kFirstWorkerRankAnnotation), "5");
  EXPECT_EQ(cluster.GpusHeld(), 16);
  // What the agent makes of it: torchrun's ranks over both roles, Volcano's index in the role.
  Result<api::TrainingPod> training = api::TrainingPodFromPod(worker);
  ASSERT_TRUE(training.has_value()) << training.error().message();
  Result<std::vector<api::Environment>> env = api::BuildWorkerEnvironments(*training);
  ASSERT_TRUE(env.has_value()) << env.error().message();
  ASSERT_EQ(env->size(), 4u);
  EXPECT_EQ((*env)[1].at("RANK"), "6");
  EXPECT_EQ((*env)[1].at("WORLD_SIZE"), "9");
  EXPECT_EQ((*env)[1].at("GROUP_RANK"), "2");
  EXPECT_EQ((*env)[1].at("ROLE_NAME"), "worker");
  EXPECT_EQ((*env)[1].at("ROLE_RANK"), "5");
  EXPECT_EQ((*env)[1].at("ROLE_WORLD_SIZE"), "8");
  EXPECT_EQ((*env)[1].at("VK_TASK_INDEX"), "1");
  EXPECT_EQ((*env)[1].at("JOB_COMPLETION_INDEX"), "1");
}

TEST(JobRolesTest, ARoleNodeSelectorPicksItsNodes) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8, "r1");
  cluster.AddNode("node-b", 8, "r2");
  cluster.Apply(R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: pinned, namespace: default}
spec:
  roles:
  - name: a
    resources: {gpu: 1}
    nodeSelector: {topology.strata.dev/rack: r2}
    template: {command: [python, a.py]}
  - name: b
    resources: {gpu: 1}
    nodeSelector: {topology.strata.dev/rack: r1}
    template: {command: [python, b.py]}
)");
  cluster.Reconcile(1);
  EXPECT_EQ(cluster.Pod("pinned-worker-0").spec.node_name, "node-b");
  EXPECT_EQ(cluster.Pod("pinned-worker-1").spec.node_name, "node-a");

  // A selector no node matches leaves the whole job pending.
  cluster.Apply(R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: nowhere, namespace: default}
spec:
  replicas: 1
  nodeSelector: {topology.strata.dev/rack: r9}
  template: {command: [python, c.py]}
)");
  cluster.Reconcile(1);
  EXPECT_THAT(cluster.JobPods("nowhere"), SizeIs(0));
  EXPECT_EQ(cluster.Job("nowhere").phase, api::JobPhase::kPending);
}

TEST(JobRolesTest, ARoleStartsOnceTheRolesItDependsOnAreReady) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.AddNode("node-b", 8);
  cluster.Apply(R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: js, namespace: default}
spec:
  roles:
  - name: driver
    resources: {cpu: "1", memory: 1Gi}
    template: {command: [python, drive.py]}
    dependsOn: [{role: workers}]
  - name: workers
    replicas: 2
    resources: {gpu: 8}
    template: {command: [python, work.py]}
)");
  cluster.Reconcile(1);
  // The gang is placed whole, but only the workers' pods exist.
  EXPECT_THAT(PodNames(cluster.JobPods("js")), ElementsAre("js-worker-1", "js-worker-2"));
  EXPECT_TRUE(cluster.Job("js").placement.has_value());
  EXPECT_THAT(cluster.Job("js").placement->pods, SizeIs(3));
  cluster.Reconcile(2);
  EXPECT_THAT(cluster.JobPods("js"), SizeIs(2));

  cluster.StartBoundPods();
  cluster.Reconcile(2);
  ASSERT_THAT(cluster.JobPods("js"), SizeIs(3));
  EXPECT_EQ(cluster.Pod("js-worker-0").spec.template_.command,
            (std::vector<std::string>{"python", "drive.py"}));
  EXPECT_EQ(cluster.Job("js").phase, api::JobPhase::kPending);
  cluster.StartBoundPods();
  cluster.Reconcile(1);
  EXPECT_EQ(cluster.Job("js").phase, api::JobPhase::kRunning);
}

TEST(JobRolesTest, InitializersCompleteBeforeTheTrainerWhoseSuccessEndsTheJob) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.AddNode("node-b", 8);
  cluster.Apply(kInitializedTrainer);
  cluster.Reconcile(1);
  EXPECT_THAT(PodNames(cluster.JobPods("tune")), ElementsAre("tune-worker-2", "tune-worker-3"));
  cluster.StartBoundPods();
  cluster.Reconcile(1);
  // Running initializers are not enough: Complete is asked for.
  EXPECT_THAT(cluster.JobPods("tune"), SizeIs(2));
  cluster.SetPodPhase("tune-worker-2", "Succeeded", 0);
  cluster.Reconcile(2);
  EXPECT_THAT(cluster.JobPods("tune"), SizeIs(2));
  cluster.SetPodPhase("tune-worker-3", "Succeeded", 0);
  cluster.Reconcile(2);
  // A completed initializer fails nothing; the trainer's pods now start, a torchrun world of
  // their own (the initializers, done before them, are not in it).
  ASSERT_THAT(cluster.JobPods("tune"), SizeIs(4));
  const api::Pod trainer = cluster.Pod("tune-worker-1");
  EXPECT_EQ(trainer.metadata.annotations.at(api::kNumNodesAnnotation), "2");
  EXPECT_EQ(trainer.metadata.annotations.at(api::kWorldSizeAnnotation), "16");
  EXPECT_EQ(trainer.metadata.annotations.at(api::kFirstWorkerRankAnnotation), "8");
  EXPECT_EQ(trainer.spec.owner.replica, 1);
  const api::Pod model = cluster.Pod("tune-worker-3");
  EXPECT_EQ(model.metadata.annotations.at(api::kNumNodesAnnotation), "1");
  EXPECT_EQ(model.spec.owner.replica, 0);
  EXPECT_EQ(model.spec.owner.rank, 3);
  EXPECT_EQ(cluster.Job("tune").phase, api::JobPhase::kPending);
  cluster.StartBoundPods();
  cluster.Reconcile(1);
  EXPECT_EQ(cluster.Job("tune").phase, api::JobPhase::kRunning);
  cluster.SetPodPhase("tune-worker-0", "Succeeded", 0);
  cluster.Reconcile(1);
  EXPECT_EQ(cluster.Job("tune").phase, api::JobPhase::kRunning);
  cluster.SetPodPhase("tune-worker-1", "Succeeded", 0);
  cluster.Reconcile(1);
  EXPECT_EQ(cluster.Job("tune").phase, api::JobPhase::kSucceeded);
  EXPECT_EQ(cluster.GpusHeld(), 0);
}

TEST(JobRolesTest, AWaitingRoleHoldsItsCapacityFromThePlacement) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.AddNode("node-b", 8);
  cluster.Apply(kInitializedTrainer);
  cluster.Reconcile(1);
  // The trainer's GPUs are held though its pods do not exist: a job that needs them waits.
  cluster.Apply(R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: other, namespace: default}
spec:
  resources: {gpu: 1}
  template: {command: [python, other.py]}
)");
  cluster.Reconcile(2);
  EXPECT_THAT(cluster.JobPods("other"), SizeIs(0));
  EXPECT_EQ(cluster.Job("other").phase, api::JobPhase::kPending);
}

TEST(JobRolesTest, SuccessOfAnyTargetRoleEndsTheJob) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.Apply(R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: race, namespace: default}
spec:
  successPolicy: {operator: Any}
  roles:
  - name: fast
    template: {command: [python, a.py]}
  - name: slow
    template: {command: [python, b.py]}
)");
  cluster.Reconcile(1);
  cluster.StartBoundPods();
  cluster.Reconcile(1);
  cluster.SetPodPhase("race-worker-1", "Succeeded", 0);
  cluster.Reconcile(1);
  EXPECT_EQ(cluster.Job("race").phase, api::JobPhase::kSucceeded);
  EXPECT_EQ(api::StopRequested(cluster.Pod("race-worker-0")), api::kStopJobFinished);
}

TEST(JobRolesTest, AFailedRoleRestartsTheWholeGroupAndItsWaitingRolesWaitAgain) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.AddNode("node-b", 8);
  std::string job = kInitializedTrainer;
  job.insert(job.find("  successPolicy"), "  maxRestarts: 1\n");
  cluster.Apply(job);
  cluster.Reconcile(1);
  cluster.StartBoundPods();
  cluster.SetPodPhase("tune-worker-2", "Failed", 1);
  cluster.Reconcile(1);
  EXPECT_EQ(cluster.Job("tune").phase, api::JobPhase::kRestarting);
  cluster.StopMarkedPods();
  cluster.Reconcile(4);
  // Placed again (run 2): the initializers' pods only.
  EXPECT_EQ(cluster.Job("tune").restart_count, 1);
  ASSERT_TRUE(cluster.Job("tune").placement.has_value());
  EXPECT_EQ(cluster.Job("tune").placement->run, 2);
  EXPECT_THAT(PodNames(cluster.JobPods("tune")), ElementsAre("tune-worker-2", "tune-worker-3"));
}

}  // namespace
}  // namespace strata::controller
