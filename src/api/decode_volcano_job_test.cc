#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/job_roles.h"
#include "api/manifest.h"

namespace strata::api {
namespace {

using ::testing::HasSubstr;

// Volcano's job-plugin shape without ssh: one task of three pods, restarted on eviction.
constexpr const char* kPluginJob = R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: test-job-plugin
  namespace: team-a
spec:
  minAvailable: 3
  schedulerName: volcano
  priorityClassName: sheddable
  policies:
    - event: PodEvicted
      action: RestartJob
    - events: [PodFailed]
      action: RestartJob
  plugins:
    env: []
    svc: ["--publish-not-ready-addresses=false"]
  maxRetry: 5
  queue: research
  tasks:
    - replicas: 3
      name: default-nginx
      minAvailable: 3
      template:
        spec:
          restartPolicy: Never
          containers:
            - image: nginx
              name: nginx
              command: [sh, -c, "echo $VK_TASK_INDEX"]
              resources:
                requests: {cpu: "1"}
)";

TEST(VolcanoJobTest, OneTaskBecomesOneGangWithTheJobsPolicies) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = DecodeManifests({{"vj.yaml", kPluginJob}}, &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->size(), 1u);
  const Job& job = *r->front().As<Job>();
  EXPECT_EQ(job.metadata.name, "test-job-plugin");
  EXPECT_EQ(job.metadata.namespace_name, "team-a");
  EXPECT_EQ(job.spec.replicas, 3);
  EXPECT_EQ(job.spec.queue, "research");
  EXPECT_EQ(job.spec.priority, -1000);
  EXPECT_EQ(job.spec.max_restarts, 5);
  EXPECT_EQ(job.spec.resources.cpu, Quantity::FromUnits(1));
  EXPECT_EQ(job.spec.clean_pod_policy, "None");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("spec.plugins.svc: accepted: strata writes no /etc/volcano "
                                     "host files"));
}

TEST(VolcanoJobTest, TheKueueLabelNamesTheQueueWhenTheJobKeepsVolcanosDefault) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = DecodeManifests({{"vj.yaml", R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: q
  labels: {kueue.x-k8s.io/queue-name: team-q}
spec:
  queue: default
  plugins: {pytorch: [--master=master, --worker=worker]}
  tasks:
    - replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, command: ["true"]}]
)"}},
                                                  &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->front().As<Job>()->spec.queue, "team-q");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("spec.plugins.pytorch: ignored: strata sets MASTER_ADDR, "
                                     "MASTER_PORT, WORLD_SIZE and RANK itself"));
}

TEST(VolcanoJobTest, RestartsOnlyWhenAPolicyOrTheRestartPolicySaysSo) {
  auto decode = [](const std::string& policies, const std::string& restart) {
    std::string text = R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j}
spec:
  queue: default
)" + policies + R"(
  tasks:
    - replicas: 2
      name: a
      template:
        spec:
          restartPolicy: )" +
                       restart + R"(
          containers: [{name: c, command: ["true"]}]
    - replicas: 2
      name: b
      template:
        spec:
          restartPolicy: )" +
                       restart + R"(
          containers: [{name: c, command: ["true"]}]
)";
    Result<std::vector<Object>> r = DecodeManifests({{"j.yaml", text}});
    EXPECT_TRUE(r.has_value()) << r.error().message();
    return r.has_value() ? *r->front().As<Job>() : Job{};
  };
  Job never = decode("", "Never");
  EXPECT_EQ(JobPodCount(never.spec), 4);  // each task a role
  EXPECT_EQ(never.spec.queue, "");        // Volcano's default queue is strata's no queue
  EXPECT_EQ(never.spec.max_restarts, 0);
  EXPECT_EQ(decode("", "OnFailure").spec.max_restarts, 3);
  EXPECT_EQ(
      decode("  policies: [{event: PodFailed, action: RestartJob}]\n", "Never").spec.max_restarts,
      3);
  EXPECT_EQ(
      decode("  policies: [{event: PodEvicted, action: RestartJob}]\n", "Never").spec.max_restarts,
      0);
}

std::string ErrorOf(const std::string& spec,
                    const std::string& tasks =
                        "  tasks:\n    - replicas: 2\n      template:\n"
                        "        spec:\n          restartPolicy: Never\n"
                        "          containers: [{name: c, command: [a]}]\n") {
  std::string text =
      "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: j\nspec:\n" + spec +
      tasks;
  Result<std::vector<Object>> r = DecodeManifests({{"j.yaml", text}});
  return r.has_value() ? "<decoded>" : r.error().message();
}

// A parameter server and its workers from two templates (Volcano's TensorFlow shape, run with
// torch's environment), the workers started once the server runs, the job complete when the
// workers are.
constexpr const char* kPsWorker = R"yaml(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: ps-worker}
spec:
  minAvailable: 3
  schedulerName: volcano
  plugins: {env: [], svc: []}
  policies: [{event: PodEvicted, action: RestartJob}]
  tasks:
    - replicas: 1
      name: ps
      template:
        spec:
          restartPolicy: Never
          containers: [{name: ps, image: python, command: [python3, ps.py]}]
    - replicas: 2
      name: worker
      dependsOn: {name: [ps]}
      policies: [{event: TaskCompleted, action: CompleteJob}]
      template:
        spec:
          restartPolicy: OnFailure
          nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
          containers:
            - name: worker
              image: python
              command: [python3, worker.py]
              resources: {limits: {nvidia.com/gpu: 1}}
)yaml";

TEST(VolcanoJobTest, TasksOfDifferentTemplatesBecomeRolesWithTheirOrderAndSuccess) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = DecodeManifests({{"v.yaml", kPsWorker}}, &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const Job& job = *r->front().As<Job>();
  ASSERT_EQ(job.spec.roles.size(), 2u);
  EXPECT_EQ(job.spec.roles[0].name, "ps");
  EXPECT_EQ(job.spec.roles[0].template_.command, (std::vector<std::string>{"python3", "ps.py"}));
  EXPECT_EQ(job.spec.roles[1].name, "worker");
  EXPECT_EQ(job.spec.roles[1].replicas, 2);
  EXPECT_EQ(job.spec.roles[1].resources.gpu, Quantity::FromUnits(1));
  EXPECT_EQ(job.spec.roles[1].node_selector.at("nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(job.spec.roles[1].depends_on, (std::vector<RoleDependency>{{"ps", "Ready"}}));
  EXPECT_EQ(job.spec.success_policy, (JobSuccessPolicy{"Any", {"worker"}}));
  EXPECT_EQ(job.spec.max_restarts, 3);  // OnFailure restarts the group up to maxRetry
  ASSERT_EQ(warnings.size(), 1u);       // the svc plugin's
}

TEST(VolcanoJobTest, WhatStrataCannotHonourIsAnErrorNamingTheField) {
  EXPECT_THAT(ErrorOf("  minAvailable: 1\n"),
              HasSubstr("spec.minAvailable: strata places whole gangs: must equal the total "
                        "replicas (2)"));
  EXPECT_THAT(ErrorOf("  minSuccess: 1\n"), HasSubstr("spec.minSuccess: a strata job succeeds"));
  EXPECT_THAT(ErrorOf("  policies: [{event: PodFailed, action: AbortJob}]\n"),
              HasSubstr("spec.policies[0].action: \"AbortJob\" on PodFailed is not supported"));
  EXPECT_THAT(ErrorOf("  policies: [{event: Unknown, action: RestartJob}]\n"),
              HasSubstr("spec.policies[0].event: RestartJob on \"Unknown\": strata restarts a job "
                        "on PodFailed and PodEvicted only"));
  EXPECT_THAT(ErrorOf("  policies: [{exitCode: 3, action: RestartJob}]\n"),
              HasSubstr("spec.policies[0].exitCode: not supported by strata"));
  EXPECT_THAT(ErrorOf("  plugins: {ssh: []}\n"), HasSubstr("spec.plugins.ssh: not supported by "
                                                           "strata: strata starts every pod's"));
  EXPECT_THAT(ErrorOf("  plugins: {tensorflow: []}\n"),
              HasSubstr("spec.plugins.tensorflow: not supported"));
  EXPECT_THAT(ErrorOf("  schedulerName: kube-batch\n"),
              HasSubstr("spec.schedulerName: strata is the scheduler"));
  EXPECT_THAT(ErrorOf("  volumes: [{mountPath: /data}]\n"),
              HasSubstr("spec.volumes: not supported by strata"));
  EXPECT_THAT(ErrorOf("  networkTopology: {mode: hard}\n"),
              HasSubstr("spec.networkTopology: not supported by strata"));
  EXPECT_THAT(ErrorOf("  priorityClassName: urgent\n"),
              HasSubstr("spec.priorityClassName: unknown priority class \"urgent\""));
  EXPECT_THAT(ErrorOf("",
                      "  tasks:\n    - replicas: 2\n      minAvailable: 1\n      template:\n"
                      "        spec:\n          restartPolicy: Never\n"
                      "          containers: [{name: c, command: [a]}]\n"),
              HasSubstr("spec.tasks[0].minAvailable: strata places whole gangs: must equal the "
                        "task's replicas (2)"));
  EXPECT_THAT(
      ErrorOf("",
              "  tasks:\n    - replicas: 2\n      template:\n"
              "        spec:\n          containers: [{name: c, command: [a]}]\n"),
      HasSubstr("spec.tasks[0].template.spec.restartPolicy: Always restarts pods for ever"));
  std::string two_tasks =
      "  tasks:\n    - {replicas: 1, name: a, template: {spec: {restartPolicy: Never, containers: "
      "[{name: c, command: [a]}]}}}\n    - {replicas: 1, name: b, template: {spec: "
      "{restartPolicy: Never, containers: [{name: c, command: [a]}]}}}\n";
  EXPECT_THAT(ErrorOf("  policies: [{event: TaskFailed, action: CompleteJob}]\n", two_tasks),
              HasSubstr("spec.policies[0].action: \"CompleteJob\" on TaskFailed is not "
                        "supported"));
  std::string any_of_two = two_tasks +
                           "    - {replicas: 1, name: c, dependsOn: {name: [a, b], "
                           "iteration: any}, template: {spec: {restartPolicy: Never, "
                           "containers: [{name: c, command: [a]}]}}}\n";
  EXPECT_THAT(ErrorOf("", any_of_two),
              HasSubstr("spec.tasks[2].dependsOn.iteration: any of several tasks is not "
                        "supported by strata"));
  std::string tolerant = two_tasks;
  tolerant.replace(tolerant.rfind("restartPolicy: Never"), 20,
                   "restartPolicy: Never, tolerations: [{operator: Exists}]");
  EXPECT_THAT(ErrorOf("", tolerant),
              HasSubstr("spec.tasks[1].template.spec.tolerations: must equal "
                        "spec.tasks[0].template.spec.tolerations"));
  EXPECT_EQ(ErrorOf("  policies: [{event: TaskCompleted, action: CompleteJob}]\n"), "<decoded>");
  EXPECT_EQ(ErrorOf("  plugins: {pytorch: [--master=master, --port=23456]}\n"), "<decoded>");
  EXPECT_THAT(ErrorOf("  plugins: {horovod: []}\n"), HasSubstr("spec.plugins.horovod: unknown"));
}

}  // namespace
}  // namespace strata::api
