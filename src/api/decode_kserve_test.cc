#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/manifest.h"

namespace strata::api {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

Result<Service> DecodeService(const std::string& text,
                              std::vector<std::string>* warnings = nullptr) {
  Result<std::vector<Object>> r = DecodeManifests({{"s.yaml", text}}, warnings);
  if (!r.has_value()) return tl::unexpected(r.error());
  if (r->size() != 1 || r->front().As<Service>() == nullptr) {
    return tl::unexpected(InternalError("not one Service"));
  }
  return *r->front().As<Service>();
}

// KServe's single-node quick-start shape: one GPU, the gateway route and scheduler as {}.
TEST(LLMInferenceServiceTest, ModelReplicasAndParallelismBecomeAVllmService) {
  std::vector<std::string> warnings;
  Result<Service> s = DecodeService(R"(
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata:
  name: qwen-small
  labels: {kueue.x-k8s.io/queue-name: serving}
spec:
  model:
    uri: hf://Qwen/Qwen2.5-0.5B-Instruct
    name: Qwen/Qwen2.5-0.5B-Instruct
  replicas: 2
  parallelism:
    tensor: 2
  template:
    containers:
      - name: main
        image: vllm/vllm-openai:latest
        args: ["--max-model-len=4096"]
        env: [{name: VLLM_LOGGING_LEVEL, value: INFO}]
        resources:
          limits: {cpu: "4", memory: 32Gi, nvidia.com/gpu: "2"}
  router:
    route: {}
    gateway: {}
    scheduler: {}
)",
                                    &warnings);
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(s->metadata.name, "qwen-small");
  EXPECT_EQ(s->spec.queue, "serving");
  EXPECT_EQ(s->spec.model, "Qwen/Qwen2.5-0.5B-Instruct");
  EXPECT_EQ(s->spec.min_replicas, 2);
  EXPECT_EQ(s->spec.max_replicas, 2);
  EXPECT_EQ(s->spec.tensor_parallel, 2);
  EXPECT_EQ(s->spec.nodes_per_replica, 1);
  EXPECT_EQ(s->spec.resources.gpu, Quantity::FromUnits(2));
  EXPECT_EQ(s->spec.engine.image, "vllm/vllm-openai:latest");
  EXPECT_EQ(s->spec.engine.command,
            (std::vector<std::string>{"vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct",
                                      "--served-model-name", "Qwen/Qwen2.5-0.5B-Instruct"}));
  EXPECT_EQ(s->spec.engine.args,
            (std::vector<std::string>{"--tensor-parallel-size=2", "--max-model-len=4096"}));
  ASSERT_EQ(s->spec.engine.env.size(), 1u);
  EXPECT_EQ(s->spec.engine.env[0].name, "VLLM_LOGGING_LEVEL");
}

TEST(LLMInferenceServiceTest, AWorkerMakesReplicasSpanNodesAndLoraAdaptersAreServed) {
  Result<Service> s = DecodeService(R"(
apiVersion: serving.kserve.io/v1alpha1
kind: LLMInferenceService
metadata: {name: big}
spec:
  model:
    uri: file:///models/llama-70b
    lora:
      adapters:
        - {name: sql, uri: file:///adapters/sql}
  parallelism: {tensor: 8, pipeline: 2, expert: true}
  template:
    containers:
      - name: main
        resources: {limits: {nvidia.com/gpu: "8"}}
  worker:
    containers:
      - name: main
        resources: {limits: {nvidia.com/gpu: "8"}}
  router: {route: {}}
)");
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_EQ(s->spec.model, "big");
  EXPECT_EQ(s->spec.nodes_per_replica, 2);
  EXPECT_EQ(s->spec.tensor_parallel, 8);
  EXPECT_EQ(s->spec.engine.command[2], "/models/llama-70b");
  EXPECT_EQ(s->spec.engine.args,
            (std::vector<std::string>{"--tensor-parallel-size=8", "--pipeline-parallel-size=2",
                                      "--enable-expert-parallel", "--enable-lora", "--lora-modules",
                                      "sql=/adapters/sql"}));
}

TEST(LLMInferenceServiceTest, DataParallelWorkersSpanDataOverDataLocalNodes) {
  Result<Service> s = DecodeService(R"(
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata: {name: dp}
spec:
  model: {uri: hf://deepseek-ai/DeepSeek-V2-Lite}
  parallelism: {data: 4, dataLocal: 2, expert: true}
  template:
    containers: [{name: main, resources: {limits: {nvidia.com/gpu: "2"}}}]
  worker:
    containers: [{name: main}]
  router: {route: {}, gateway: {}}
)");
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_EQ(s->spec.nodes_per_replica, 2);
}

TEST(LLMInferenceServiceTest, AGivenCommandIsTheEngine) {
  Result<Service> s = DecodeService(R"(
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata: {name: own}
spec:
  model: {uri: /models/tiny, name: tiny}
  template:
    containers:
      - name: main
        command: [python3, -m, my_server]
        args: [--port, "8000"]
  router: {route: {}}
)");
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_EQ(s->spec.engine.command, (std::vector<std::string>{"python3", "-m", "my_server"}));
  EXPECT_EQ(s->spec.engine.args, (std::vector<std::string>{"--port", "8000"}));
}

// The error of a service with `spec`'s fields, and a gateway route unless they give a router.
std::string ErrorOf(const std::string& spec) {
  const std::string router =
      spec.find("router:") == std::string::npos ? "  router: {route: {}}\n" : "";
  Result<std::vector<Object>> r =
      DecodeManifests({{"s.yaml",
                        "apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceService\n"
                        "metadata: {name: s}\nspec:\n  model: {uri: hf://o/m}\n" +
                            router + spec}});
  return r.has_value() ? "<decoded>" : r.error().message();
}

TEST(LLMInferenceServiceTest, WhatStrataCannotHonourIsAnErrorNamingTheField) {
  EXPECT_EQ(ErrorOf("  prefill:\n    replicas: 2\n"),
            "s.yaml: document 1 (LLMInferenceService s): spec.prefill: not supported by strata: "
            "disaggregated prefill is not supported");
  EXPECT_THAT(ErrorOf("  baseRefs: [{name: kserve-config-llm-template}]\n"),
              HasSubstr("spec.baseRefs: not supported by strata"));
  EXPECT_THAT(ErrorOf("  replicas: 0\n"),
              HasSubstr("spec.replicas: strata runs at least one replica"));
  EXPECT_THAT(ErrorOf(R"(  parallelism: {tensor: 3}
  template: {containers: [{name: main, resources: {limits: {nvidia.com/gpu: "2"}}}]}
  worker: {containers: [{name: main}]}
)"),
              HasSubstr("spec.worker: a replica spans tensor x pipeline (3) GPUs over pods of 2 "
                        "nvidia.com/gpu each"));
  EXPECT_THAT(ErrorOf(R"(  parallelism: {tensor: 4}
  template: {containers: [{name: main, resources: {limits: {nvidia.com/gpu: "4"}}}]}
  worker: {containers: [{name: main}]}
)"),
              HasSubstr("spec.worker: the parallel sizes make 1 node(s) per replica"));
  EXPECT_THAT(ErrorOf(R"(  parallelism: {tensor: 2, pipeline: 2}
  template: {containers: [{name: main, image: a, resources: {limits: {nvidia.com/gpu: "2"}}}]}
  worker: {containers: [{name: w, image: b, command: [ray, start]}]}
)"),
              HasSubstr("spec.worker.containers[0]: strata runs one engine container on every "
                        "pod of a replica"));
  EXPECT_THAT(ErrorOf("  router:\n    route: {http: {refs: [{name: my-route}]}}\n"),
              HasSubstr("spec.router.route.http.refs: not supported by strata"));
  EXPECT_THAT(ErrorOf("  router:\n    scheduler: {pool: {ref: {name: p}}}\n"),
              HasSubstr("spec.router.scheduler.pool: not supported by strata"));
  EXPECT_THAT(ErrorOf(R"(  template:
    containers:
      - name: main
        livenessProbe: {grpc: {port: 8000}}
)"),
              HasSubstr("spec.template.containers[0].livenessProbe.grpc: not supported by strata"));
}

TEST(LLMInferenceServiceTest, MeaninglessFieldsAreWarnedOf) {
  std::vector<std::string> warnings;
  Result<Service> s = DecodeService(R"(
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata: {name: w}
spec:
  model: {uri: hf://o/m}
  storageInitializer: {enabled: false}
  template:
    imagePullSecrets: [{name: registry}]
    containers:
      - name: main
        imagePullPolicy: Always
        securityContext: {allowPrivilegeEscalation: false}
)",
                                    &warnings);
  ASSERT_TRUE(s.has_value()) << s.error().message();
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  EXPECT_EQ(warnings.size(), 5u) << all;
  EXPECT_THAT(all, AllOf(HasSubstr("spec.storageInitializer: ignored"),
                         HasSubstr("spec.template.imagePullSecrets: ignored"),
                         HasSubstr("spec.template.containers[0].imagePullPolicy: ignored"),
                         HasSubstr("securityContext.allowPrivilegeEscalation: ignored"),
                         HasSubstr("spec.router: absent")));
}

TEST(InferenceServiceTest, PredictorsOtherThanModelAreNamedErrors) {
  Result<std::vector<Object>> r = DecodeManifests({{"isvc.yaml", R"(
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: sklearn-iris}
spec:
  predictor:
    sklearn:
      storageUri: gs://kfserving-examples/models/sklearn/1.0/model
)"}});
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message(),
              HasSubstr("spec.predictor.sklearn: not supported by strata: strata serves language "
                        "models with vLLM: use predictor.model"));
}

}  // namespace
}  // namespace strata::api
