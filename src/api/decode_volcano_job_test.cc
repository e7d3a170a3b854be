#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
  EXPECT_EQ(never.spec.replicas, 4);  // identical tasks add up
  EXPECT_EQ(never.spec.queue, "");    // Volcano's default queue is strata's no queue
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

TEST(VolcanoJobTest, WhatStrataCannotHonourIsAnErrorNamingTheField) {
  EXPECT_EQ(ErrorOf("", R"(  tasks:
    - replicas: 1
      name: ps
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: c, command: [ps]}]
    - replicas: 2
      name: worker
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: c, command: [worker]}]
)"),
            "j.yaml: document 1 (Job j): spec.tasks[1].template: differs from "
            "spec.tasks[0].template: a Job with several pod templates (a driver and workers, say) "
            "has no home in strata's object model yet; strata runs one template on every pod of "
            "a job");
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
  EXPECT_THAT(ErrorOf("  plugins: {env: []}\n", two_tasks),
              HasSubstr("spec.plugins.env: VK_TASK_INDEX counts pods from 0 in each task"));
  EXPECT_THAT(ErrorOf("  policies: [{event: TaskCompleted, action: CompleteJob}]\n", two_tasks),
              HasSubstr("spec.policies[0].action: \"CompleteJob\" on TaskCompleted is not "
                        "supported"));
  EXPECT_EQ(ErrorOf("  policies: [{event: TaskCompleted, action: CompleteJob}]\n"), "<decoded>");
  EXPECT_EQ(ErrorOf("  plugins: {pytorch: [--master=master, --port=23456]}\n"), "<decoded>");
  EXPECT_THAT(ErrorOf("  plugins: {horovod: []}\n"), HasSubstr("spec.plugins.horovod: unknown"));
}

}  // namespace
}  // namespace strata::api
