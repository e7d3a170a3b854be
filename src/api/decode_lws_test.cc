#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/annotations.h"
#include "api/edited_for_test.h"
#include "api/manifest.h"

namespace strata::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Two groups of a Ray head and a worker, in the shape of LWS's vLLM guide.
constexpr const char* kLws = R"(
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: vllm
  labels: {kueue.x-k8s.io/queue-name: user-queue}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 4
    restartPolicy: RecreateGroupOnPodRestart
    leaderTemplate:
      metadata:
        labels: {app: vllm}
      spec:
        containers:
          - name: leader
            command: [sh, -c, "ray start --head && vllm serve m --pipeline-parallel-size 4"]
            resources:
              limits: {nvidia.com/gpu: 8}
    workerTemplate:
      metadata:
        labels: {app: vllm}
      spec:
        containers:
          - name: worker
            command: [sh, -c, "ray start --address=$LWS_LEADER_ADDRESS:6379 --block"]
            resources:
              limits: {nvidia.com/gpu: 8}
)";

std::string ErrorOf(const std::string& text) {
  Result<std::vector<Object>> r = DecodeManifests({{"lws.yaml", text}});
  EXPECT_FALSE(r.has_value()) << "decoded without error:\n" << text;
  return r.has_value() ? "" : r.error().message();
}

TEST(LeaderWorkerSetTest, EachGroupIsAReplicaSpanningSizePodsWithTheLeaderOnRankZero) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = DecodeManifests({{"lws.yaml", kLws}}, &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->size(), 1u);
  const Service& service = *r->front().As<Service>();
  const ServiceSpec& s = service.spec;
  EXPECT_EQ(s.model, "vllm");
  EXPECT_EQ(s.queue, "user-queue");
  EXPECT_EQ(s.min_replicas, 2);
  EXPECT_EQ(s.max_replicas, 2);
  EXPECT_EQ(s.nodes_per_replica, 4);
  EXPECT_EQ(s.resources.gpu, Quantity::FromUnits(8));
  EXPECT_EQ(s.tensor_parallel, 32);
  EXPECT_EQ(s.engine.command.back(), "ray start --address=$LWS_LEADER_ADDRESS:6379 --block");
  ASSERT_TRUE(s.leader.has_value());
  EXPECT_EQ(s.leader->command.back(),
            "ray start --head && vllm serve m --pipeline-parallel-size 4");
  // LWS's rollout defaults: no surge, one group at a time.
  EXPECT_EQ(s.max_surge, 0);
  EXPECT_EQ(s.max_unavailable, 1);
  EXPECT_TRUE(s.topology.level.empty());
  EXPECT_EQ(service.metadata.labels,
            (std::map<std::string, std::string>{{"app", "vllm"}, {kLwsNameLabel, "vllm"}}));
  EXPECT_TRUE(warnings.empty());
}

TEST(LeaderWorkerSetTest, ExclusiveTopologyKeepsTheGroupInOneDomain) {
  std::string one_group = Edited(
      Edited(kLws, "replicas: 2", "replicas: 1"), "labels: {kueue.x-k8s.io/queue-name: user-queue}",
      "annotations: {leaderworkerset.sigs.k8s.io/exclusive-topology: topology.strata.dev/rack}");
  Result<std::vector<Object>> r = DecodeManifests({{"lws.yaml", one_group}});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const Service& service = *r->front().As<Service>();
  EXPECT_EQ(service.spec.topology, (TopologyConstraint{"topology.strata.dev/rack", "Required"}));
  EXPECT_TRUE(service.metadata.annotations.empty());
  // With several groups strata could put two of them in one domain.
  EXPECT_THAT(ErrorOf(Edited(one_group, "replicas: 1", "replicas: 3")),
              HasSubstr("metadata.annotations[leaderworkerset.sigs.k8s.io/exclusive-topology]: "
                        "strata keeps each group within one domain but may place two groups in "
                        "the same one: exclusive placement needs replicas 1, got 3"));
}

TEST(LeaderWorkerSetTest, RolloutBoundsAreHonoured) {
  Result<std::vector<Object>> r = DecodeManifests(
      {{"lws.yaml",
        Edited(kLws, "replicas: 2\n",
               "replicas: 2\n  rolloutStrategy:\n    type: RollingUpdate\n"
               "    rollingUpdateConfiguration: {maxSurge: 50%, maxUnavailable: 0}\n")}});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->front().As<Service>()->spec.max_surge, 1);
  EXPECT_EQ(r->front().As<Service>()->spec.max_unavailable, 0);
}

TEST(LeaderWorkerSetTest, LeaderLabelsNotOnWorkersAreAWarning) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = DecodeManifests(
      {{"lws.yaml", Edited(kLws, "labels: {app: vllm}", "labels: {app: vllm, role: leader}")}},
      &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_THAT(warnings,
              ElementsAre(HasSubstr("spec.leaderWorkerTemplate.leaderTemplate.metadata.labels["
                                    "role]: ignored: every pod of a group carries the "
                                    "workerTemplate's labels")));
}

TEST(LeaderWorkerSetTest, WhatStrataCannotHonourIsAnErrorNamingTheField) {
  EXPECT_THAT(
      ErrorOf(Edited(kLws, "restartPolicy: RecreateGroupOnPodRestart", "restartPolicy: None")),
      HasSubstr("spec.leaderWorkerTemplate.restartPolicy: \"None\": strata stops and "
                "recreates a whole group"));
  EXPECT_THAT(ErrorOf(Edited(kLws, "replicas: 2\n", "replicas: 2\n  startupPolicy: LeaderReady\n")),
              HasSubstr("spec.startupPolicy: LeaderReady: strata starts a group's pods together"));
  EXPECT_THAT(ErrorOf(Edited(kLws, "size: 4", "size: 4\n    subGroupPolicy: {subGroupSize: 2}")),
              HasSubstr("spec.leaderWorkerTemplate.subGroupPolicy: not supported by strata"));
  EXPECT_THAT(
      ErrorOf(Edited(kLws, "replicas: 2\n",
                     "replicas: 2\n  rolloutStrategy:\n    rollingUpdateConfiguration: "
                     "{partition: 1}\n")),
      HasSubstr("spec.rolloutStrategy.rollingUpdateConfiguration.partition: strata updates every "
                "group"));
  // The leader's pod may differ from the workers' only in what it runs.
  EXPECT_THAT(ErrorOf(Edited(kLws, "limits: {nvidia.com/gpu: 8}", "limits: {nvidia.com/gpu: 1}")),
              HasSubstr("spec.leaderWorkerTemplate.leaderTemplate.spec.containers[0].resources: "
                        "strata gives every pod of a group the same resources"));
  EXPECT_THAT(ErrorOf(Edited(kLws, "name: worker",
                             "name: worker\n            env: [{name: "
                             "LWS_WORKER_INDEX, value: \"1\"}]")),
              HasSubstr("spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].env[0].name: "
                        "\"LWS_WORKER_INDEX\" is reserved"));
}

}  // namespace
}  // namespace strata::api
