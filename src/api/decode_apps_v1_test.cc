#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/decoded_for_test.h"
#include "api/edited_for_test.h"
#include "api/manifest.h"

namespace strata::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A GPU Deployment in the shape of vLLM's Kubernetes guide, queued by Kueue.
constexpr const char* kDeployment = R"(
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
  namespace: team-a
  labels:
    app: chat
    kueue.x-k8s.io/queue-name: user-queue
spec:
  replicas: 4
  strategy:
    rollingUpdate: {maxSurge: 50%, maxUnavailable: 1}
  selector:
    matchLabels: {app: chat}
  template:
    metadata:
      labels: {app: chat, tier: gpu}
    spec:
      priorityClassName: critical
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
        - name: vllm
          image: vllm/vllm-openai:latest
          imagePullPolicy: Always
          command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct]
          args: [--max-model-len, "4096"]
          resources:
            limits: {nvidia.com/gpu: 2, cpu: "4", memory: 16Gi}
)";

// kDeployment with `from` replaced by `to` (which must occur).
std::string StatefulSet(const std::string& spec_extra) {
  return R"(
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
        - name: db
          command: [sh, -c, "exec sleep 600"]
          resources:
            limits: {nvidia.com/gpu: 1}
)" + spec_extra;
}

TEST(DeploymentTest, BecomesAServiceOfFixedReplicasRunningTheContainer) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = Decode(kDeployment, &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->size(), 1u);
  const Service& service = *r->front().As<Service>();
  EXPECT_EQ(service.metadata.name, "chat");
  EXPECT_EQ(service.metadata.namespace_name, "team-a");
  // The template's labels go onto the Service, whose pods carry them; the queue label became
  // the queue.
  EXPECT_EQ(service.metadata.labels,
            (std::map<std::string, std::string>{{"app", "chat"}, {"tier", "gpu"}}));
  const ServiceSpec& s = service.spec;
  EXPECT_EQ(s.queue, "user-queue");
  EXPECT_EQ(s.model, "chat");
  EXPECT_EQ(s.min_replicas, 4);
  EXPECT_EQ(s.max_replicas, 4);
  EXPECT_EQ(s.nodes_per_replica, 1);
  EXPECT_EQ(s.priority, 1000);
  EXPECT_EQ(s.resources.gpu, Quantity::FromUnits(2));
  EXPECT_EQ(s.tensor_parallel, 2);
  ASSERT_EQ(s.tolerations.size(), 1u);
  EXPECT_EQ(s.tolerations[0].key, "nvidia.com/gpu");
  EXPECT_EQ(s.engine.command,
            (std::vector<std::string>{"vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct"}));
  EXPECT_EQ(s.engine.args, (std::vector<std::string>{"--max-model-len", "4096"}));
  EXPECT_EQ(s.max_surge, 2);  // 50% of 4
  EXPECT_EQ(s.max_unavailable, 1);
  EXPECT_FALSE(s.ordinal_names);
  EXPECT_FALSE(s.ordered_start);
  EXPECT_FALSE(s.leader.has_value());
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("spec.template.spec.containers[0].imagePullPolicy: "
                                              "ignored: pods run as local processes")));
}

TEST(DeploymentTest, RolloutBoundsFollowKubernetesRounding) {
  // Defaults 25% and 25% of 4: one surge (rounded up), one unavailable (rounded down).
  Result<std::vector<Object>> r =
      Decode(Edited(kDeployment, "rollingUpdate: {maxSurge: 50%, maxUnavailable: 1}", "{}"));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->front().As<Service>()->spec.max_surge, 1);
  EXPECT_EQ(r->front().As<Service>()->spec.max_unavailable, 1);
  // Of 1 replica: 25% surges one and keeps the one serving.
  r = Decode(Edited(Edited(kDeployment, "replicas: 4", "replicas: 1"),
                    "rollingUpdate: {maxSurge: 50%, maxUnavailable: 1}", "{}"));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->front().As<Service>()->spec.max_surge, 1);
  EXPECT_EQ(r->front().As<Service>()->spec.max_unavailable, 0);
  // Both rounding to 0 (10% of 3): one may be unavailable, as Kubernetes resolves them.
  r = Decode(Edited(Edited(kDeployment, "replicas: 4", "replicas: 3"),
                    "maxSurge: 50%, maxUnavailable: 1", "maxSurge: 0, maxUnavailable: 10%"));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->front().As<Service>()->spec.max_surge, 0);
  EXPECT_EQ(r->front().As<Service>()->spec.max_unavailable, 1);
  // No replicas: nothing to roll, and nothing refused.
  r = Decode(Edited(kDeployment, "replicas: 4", "replicas: 0"));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->front().As<Service>()->spec.max_replicas, 0);
  // Recreate: no surge, every replica may stop at once.
  r = Decode(
      Edited(kDeployment, "rollingUpdate: {maxSurge: 50%, maxUnavailable: 1}", "type: Recreate"));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->front().As<Service>()->spec.max_surge, 0);
  EXPECT_EQ(r->front().As<Service>()->spec.max_unavailable, 4);
}

TEST(DeploymentTest, FieldsThatWouldChangeBehaviourAreErrorsNamingThem) {
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "maxSurge: 50%, maxUnavailable: 1",
                             "maxSurge: 0, maxUnavailable: 0%")),
              HasSubstr("spec.strategy.rollingUpdate.maxUnavailable: may not be 0 when maxSurge "
                        "is 0"));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "maxSurge: 50%", "maxSurge: lots")),
              HasSubstr("spec.strategy.rollingUpdate.maxSurge: must be a number of pods or a "
                        "percentage from 0% to 100%, got \"lots\""));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "matchLabels: {app: chat}", "matchLabels: {app: web}")),
              HasSubstr("spec.selector.matchLabels[app]: selects \"app=web\" but "
                        "spec.template.metadata.labels does not carry it"));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "priorityClassName: critical",
                             "priorityClassName: critical\n      restartPolicy: Never")),
              HasSubstr("spec.template.spec.restartPolicy: must be Always"));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "replicas: 4", "replicas: 4\n  minReadySeconds: 10")),
              HasSubstr("spec.minReadySeconds: not supported by strata"));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "replicas: 4", "replicas: 4\n  paused: true")),
              HasSubstr("spec.paused: strata rolls every update out"));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "labels: {app: chat, tier: gpu}",
                             "labels: {app: chat, kueue.x-k8s.io/queue-name: other}")),
              HasSubstr("spec.template.metadata.labels[kueue.x-k8s.io/queue-name]: names queue "
                        "\"other\" but the object's label names \"user-queue\""));
  EXPECT_THAT(
      ErrorOf(Edited(kDeployment, "image: vllm", "livenessProbe: {}\n          image: vllm")),
      HasSubstr("spec.template.spec.containers[0].livenessProbe: give exactly one of httpGet"));
}

TEST(StatefulSetTest, PodsGetOrdinalNamesAndStartInOrderByDefault) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = Decode(StatefulSet(""), &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const ServiceSpec& s = r->front().As<Service>()->spec;
  EXPECT_TRUE(s.ordinal_names);
  EXPECT_TRUE(s.ordered_start);
  EXPECT_EQ(s.min_replicas, 3);
  EXPECT_EQ(s.max_replicas, 3);
  // Never more pods than the count: a successor takes its predecessor's name.
  EXPECT_EQ(s.max_surge, 0);
  EXPECT_EQ(s.max_unavailable, 1);
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("spec.serviceName: ignored")));

  r = Decode(StatefulSet(
      "  podManagementPolicy: Parallel\n  updateStrategy:\n    rollingUpdate: {maxUnavailable: "
      "67%}\n"));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_FALSE(r->front().As<Service>()->spec.ordered_start);
  EXPECT_EQ(r->front().As<Service>()->spec.max_unavailable, 2);  // 67% of 3, rounded down
}

TEST(StatefulSetTest, WhatStrataCannotHonourIsAnErrorNamingTheField) {
  EXPECT_THAT(ErrorOf(StatefulSet("  updateStrategy: {type: OnDelete}\n")),
              HasSubstr("spec.updateStrategy.type: OnDelete: strata replaces the pods"));
  EXPECT_THAT(ErrorOf(StatefulSet("  updateStrategy:\n    rollingUpdate: {partition: 2}\n")),
              HasSubstr("spec.updateStrategy.rollingUpdate.partition: strata updates every pod"));
  EXPECT_THAT(ErrorOf(StatefulSet("  volumeClaimTemplates: [{metadata: {name: data}}]\n")),
              HasSubstr("spec.volumeClaimTemplates: not supported by strata: strata has no "
                        "persistent volumes"));
  EXPECT_THAT(ErrorOf(StatefulSet("  ordinals: {start: 5}\n")),
              HasSubstr("spec.ordinals: not supported by strata"));
  EXPECT_THAT(ErrorOf(StatefulSet("  podManagementPolicy: Random\n")),
              HasSubstr("spec.podManagementPolicy"));
}

}  // namespace
}  // namespace strata::api
