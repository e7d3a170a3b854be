#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/edited_for_test.h"
#include "api/manifest.h"

namespace strata::api {
namespace {

using ::testing::HasSubstr;

// A vLLM Deployment and the ScaledObject that scales it on waiting requests, in the shape of
// KEDA's Prometheus scaler documentation.
constexpr const char* kDeployment = R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama, namespace: serving}
spec:
  replicas: 1
  selector: {matchLabels: {app: llama}}
  template:
    metadata: {labels: {app: llama}}
    spec:
      containers:
        - name: vllm
          command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct]
          resources: {limits: {nvidia.com/gpu: 1}}
)";

constexpr const char* kScaledObject = R"(
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: llama-scaler, namespace: serving}
spec:
  scaleTargetRef: {name: llama}
  minReplicaCount: 0
  maxReplicaCount: 6
  cooldownPeriod: 120
  pollingInterval: 15
  triggers:
    - type: prometheus
      metadata:
        serverAddress: http://prometheus.monitoring:9090
        query: sum(vllm:num_requests_waiting{model_name="meta-llama/Llama-3.1-8B-Instruct"})
        threshold: "5"
)";

Result<std::vector<Object>> Decode(const std::string& scaled_object,
                                   std::vector<std::string>* warnings = nullptr) {
  return DecodeManifests({{"deployment.yaml", kDeployment}, {"scaledobject.yaml", scaled_object}},
                         warnings);
}

std::string ErrorOf(const std::string& scaled_object) {
  Result<std::vector<Object>> r = Decode(scaled_object);
  EXPECT_FALSE(r.has_value()) << "decoded without error:\n" << scaled_object;
  return r.has_value() ? "" : r.error().message();
}

const Service& OnlyService(const std::vector<Object>& objects) {
  EXPECT_EQ(objects.size(), 1u);
  const Service* service = objects.at(0).As<Service>();
  EXPECT_NE(service, nullptr);
  return *service;
}

TEST(ScaledObjectTest, WaitingRequestsScaleTheDeploymentsServiceWithinItsBounds) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = Decode(kScaledObject, &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  const Service& service = OnlyService(*r);
  EXPECT_EQ(service.metadata.name, "llama");
  EXPECT_EQ(service.spec.min_replicas, 0);
  EXPECT_EQ(service.spec.max_replicas, 6);
  EXPECT_EQ(service.spec.autoscaling.metric, "queue");
  EXPECT_EQ(service.spec.autoscaling.target, 5);
  EXPECT_EQ(service.spec.autoscaling.scale_to_zero_after, std::chrono::seconds(120));
  // What strata does not need is said, not silently dropped.
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  EXPECT_THAT(all, HasSubstr("spec.pollingInterval"));
  EXPECT_THAT(all, HasSubstr("spec.triggers[0].metadata[serverAddress]"));
}

TEST(ScaledObjectTest, KedaDefaultsAndEachVllmMetric) {
  // No bounds given: KEDA's 0 and 100, and its 300 s cooldown before zero.
  std::string defaults = Edited(kScaledObject,
                                "  minReplicaCount: 0\n  maxReplicaCount: 6\n"
                                "  cooldownPeriod: 120\n",
                                "");
  Result<std::vector<Object>> r = Decode(defaults);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(OnlyService(*r).spec.min_replicas, 0);
  EXPECT_EQ(OnlyService(*r).spec.max_replicas, 100);
  EXPECT_EQ(OnlyService(*r).spec.autoscaling.scale_to_zero_after, std::chrono::seconds(300));

  const struct {
    std::string query;
    std::string threshold;
    std::string metric;
  } cases[] = {
      {"sum(vllm:num_requests_running) + sum(vllm:num_requests_waiting)", "32", "concurrency"},
      {"vllm:num_requests_running", "32", "concurrency"},
      {"avg(vllm:gpu_cache_usage_perc)", "0.8", "kvCache"},
      {"avg(vllm:kv_cache_usage_perc{namespace=\"serving\"})", "0.7", "kvCache"},
      {"sum(rate(vllm:request_success_total[1m]))", "2.5", "rps"},
  };
  for (const auto& c : cases) {
    std::string text = Edited(kScaledObject,
                              "sum(vllm:num_requests_waiting{model_name=\"meta-llama/"
                              "Llama-3.1-8B-Instruct\"})",
                              "'" + c.query + "'");
    text = Edited(text, "threshold: \"5\"", "threshold: \"" + c.threshold + "\"");
    Result<std::vector<Object>> decoded = Decode(text);
    ASSERT_TRUE(decoded.has_value()) << c.query << ": " << decoded.error().ToString();
    EXPECT_EQ(OnlyService(*decoded).spec.autoscaling.metric, c.metric) << c.query;
    EXPECT_EQ(OnlyService(*decoded).spec.autoscaling.target, std::stod(c.threshold)) << c.query;
  }
}

TEST(ScaledObjectTest, WhatStrataCannotHonourIsAnErrorNamingTheField) {
  const std::string waiting_query =
      "sum(vllm:num_requests_waiting{model_name=\"meta-llama/Llama-3.1-8B-Instruct\"})";
  EXPECT_THAT(ErrorOf(Edited(kScaledObject, "type: prometheus", "type: cpu")),
              HasSubstr("spec.triggers[0].type: \"cpu\": strata scales services on their "
                        "engines' signals"));
  EXPECT_THAT(ErrorOf(Edited(kScaledObject, waiting_query, "sum(http_requests_total)")),
              HasSubstr("spec.triggers[0].metadata[query]: names no vLLM metric"));
  EXPECT_THAT(ErrorOf(Edited(kScaledObject, waiting_query, "vllm:time_to_first_token_seconds")),
              HasSubstr("names vllm:time_to_first_token_seconds, which strata does not scale on"));
  EXPECT_THAT(ErrorOf(Edited(kScaledObject, "threshold: \"5\"", "threshold: \"many\"")),
              HasSubstr("spec.triggers[0].metadata[threshold]: expected a number > 0"));
  EXPECT_THAT(ErrorOf(Edited(kScaledObject, "threshold: \"5\"",
                             "threshold: \"5\"\n        activationThreshold: \"3\"")),
              HasSubstr("spec.triggers[0].metadata[activationThreshold]"));
  EXPECT_THAT(ErrorOf(Edited(kScaledObject, "    - type: prometheus",
                             "    - type: prometheus\n      metricType: Value")),
              HasSubstr("spec.triggers[0].metricType: \"Value\""));
  EXPECT_THAT(ErrorOf(Edited(kScaledObject, "  cooldownPeriod: 120",
                             "  cooldownPeriod: 120\n  idleReplicaCount: 0")),
              HasSubstr("spec.idleReplicaCount"));
  EXPECT_THAT(ErrorOf(Edited(kScaledObject, "  cooldownPeriod: 120",
                             "  cooldownPeriod: 120\n  advanced: {horizontalPodAutoscalerConfig: "
                             "{behavior: {}}}")),
              HasSubstr("spec.advanced"));
  EXPECT_THAT(ErrorOf(Edited(kScaledObject, "minReplicaCount: 0", "minReplicaCount: 9")),
              HasSubstr("spec.minReplicaCount: 9 is more than maxReplicaCount 6"));
  EXPECT_THAT(ErrorOf(Edited(kScaledObject, "maxReplicaCount: 6", "maxReplicaCount: 1000000")),
              HasSubstr("spec.maxReplicaCount: 1000000 exceeds the limit of 10000"));
}

TEST(ScaledObjectTest, ItsTargetMustBeAmongTheManifestsAndScaledOnce) {
  EXPECT_THAT(ErrorOf(Edited(kScaledObject, "{name: llama}", "{name: mistral}")),
              HasSubstr("spec.scaleTargetRef.name: Deployment \"mistral\" is not among these "
                        "manifests in namespace \"serving\""));
  EXPECT_THAT(ErrorOf(Edited(kScaledObject, "{name: llama}", "{name: llama, kind: StatefulSet}")),
              HasSubstr("StatefulSet \"llama\" is not among these manifests"));
  EXPECT_THAT(ErrorOf(Edited(kScaledObject, "namespace: serving", "namespace: other")),
              HasSubstr("in namespace \"other\""));
  Result<std::vector<Object>> twice =
      DecodeManifests({{"deployment.yaml", kDeployment},
                       {"a.yaml", kScaledObject},
                       {"b.yaml", Edited(kScaledObject, "llama-scaler", "second-scaler")}});
  ASSERT_FALSE(twice.has_value());
  EXPECT_THAT(twice.error().message(), HasSubstr("is already scaled by a.yaml: document 1"));
}

}  // namespace
}  // namespace strata::api
