#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/edited_for_test.h"
#include "api/encode.h"
#include "api/manifest.h"
#include "api/served_model_name.h"

namespace strata::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A vLLM Deployment serving a model under a name of its own, an InferencePool selecting its
// pods, and two objectives of that pool, in the shapes of the Inference Extension's guides.
constexpr const char* kDeployment = R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama, namespace: serving}
spec:
  replicas: 1
  selector: {matchLabels: {app: llama}}
  template:
    metadata: {labels: {app: llama, pool: main}}
    spec:
      containers:
        - name: vllm
          command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct]
          args: [--served-model-name, llama-chat]
          resources: {limits: {nvidia.com/gpu: 1}}
)";

constexpr const char* kPool = R"(
apiVersion: inference.networking.k8s.io/v1
kind: InferencePool
metadata: {name: main, namespace: serving}
spec:
  selector: {matchLabels: {pool: main}}
  targetPorts: [{number: 8000}]
  endpointPickerRef: {name: main-epp, port: {number: 9002}, failureMode: FailOpen}
)";

constexpr const char* kObjectives = R"(
apiVersion: inference.networking.x-k8s.io/v1alpha2
kind: InferenceObjective
metadata: {name: realtime, namespace: serving}
spec:
  priority: 100
  poolRef: {name: main}
---
apiVersion: inference.networking.x-k8s.io/v1alpha2
kind: InferenceObjective
metadata: {name: batch, namespace: serving}
spec:
  priority: -1
  poolRef: {name: main, group: inference.networking.k8s.io, kind: InferencePool}
)";

Result<std::vector<Object>> Decode(const std::string& deployment, const std::string& pool,
                                   const std::string& objectives,
                                   std::vector<std::string>* warnings = nullptr) {
  return DecodeManifests(
      {{"deployment.yaml", deployment}, {"pool.yaml", pool}, {"objectives.yaml", objectives}},
      warnings);
}

std::string ErrorOf(const std::string& deployment, const std::string& pool,
                    const std::string& objectives) {
  Result<std::vector<Object>> r = Decode(deployment, pool, objectives);
  EXPECT_FALSE(r.has_value()) << "decoded without error:\n" << pool << objectives;
  return r.has_value() ? "" : r.error().message();
}

TEST(InferencePoolTest, ThePoolsServicesServeTheServedNameWithTheObjectivesPriorities) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = Decode(kDeployment, kPool, kObjectives, &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->size(), 1u);
  const Service* service = r->at(0).As<Service>();
  ASSERT_NE(service, nullptr);
  EXPECT_EQ(service->metadata.name, "llama");
  EXPECT_EQ(service->spec.model, "llama-chat");
  EXPECT_THAT(service->spec.objectives,
              ElementsAre(ServiceObjective{"realtime", 100}, ServiceObjective{"batch", -1}));
  // The objectives survive the store: they are part of the native Service.
  Result<Object> stored = DecodeObject(EncodeObject(r->at(0)));
  ASSERT_TRUE(stored.has_value()) << stored.error().ToString();
  EXPECT_EQ(stored->As<Service>()->spec.objectives, service->spec.objectives);
  // What strata does not use is said, not dropped.
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  EXPECT_THAT(all, HasSubstr("pool.yaml: document 1 (InferencePool main): spec.targetPorts"));
  EXPECT_THAT(all, HasSubstr("spec.endpointPickerRef: ignored: strata's gateway is the endpoint "
                             "picker"));
  EXPECT_THAT(all, HasSubstr("spec.endpointPickerRef.failureMode"));
  EXPECT_EQ(warnings.size(), 3u) << all;
}

TEST(InferencePoolTest, AServiceOutsideThePoolKeepsItsNameAndAPoolOfNothingIsAWarning) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r =
      Decode(kDeployment, Edited(kPool, "{pool: main}", "{pool: other}"), "", &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->at(0).As<Service>()->spec.model, "llama");
  EXPECT_TRUE(r->at(0).As<Service>()->spec.objectives.empty());
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  EXPECT_THAT(all, HasSubstr("spec.selector.matchLabels: selects no Deployment, StatefulSet or "
                             "LeaderWorkerSet among these manifests in namespace \"serving\""));
  // Another namespace's pods are not the pool's either.
  r = Decode(kDeployment, Edited(kPool, "namespace: serving", "namespace: other"), "", &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->at(0).As<Service>()->spec.model, "llama");
}

TEST(InferencePoolTest, ErrorsNameTheField) {
  EXPECT_THAT(ErrorOf(kDeployment, Edited(kPool, "targetPorts", "targetPort"), ""),
              HasSubstr("spec.targetPort: unknown field"));
  EXPECT_THAT(
      ErrorOf(kDeployment, Edited(kPool, "[{number: 8000}]", "[{number: 1}, {number: 2}]"), ""),
      HasSubstr("spec.targetPorts: the API allows exactly one port, got 2"));
  EXPECT_THAT(ErrorOf(kDeployment, Edited(kPool, "{number: 8000}", "{number: 0}"), ""),
              HasSubstr("spec.targetPorts[0].number: must be 1 to 65535"));
  EXPECT_THAT(ErrorOf(kDeployment, Edited(kPool, "port: {number: 9002}, ", ""), ""),
              HasSubstr("spec.endpointPickerRef.port: required when kind is Service"));
  EXPECT_THAT(ErrorOf(kDeployment, Edited(kPool, "name: main-epp, ", ""), ""),
              HasSubstr("spec.endpointPickerRef.name: required field is missing"));
  EXPECT_THAT(ErrorOf(kDeployment, Edited(kPool, "FailOpen", "FailSoft"), ""),
              HasSubstr("spec.endpointPickerRef.failureMode"));
  EXPECT_THAT(ErrorOf(kDeployment, Edited(kPool, "{matchLabels: {pool: main}}", "{}"), ""),
              HasSubstr("spec.selector.matchLabels: required field is missing"));
  // Two pools over one Service.
  std::string second = Edited(kPool, "name: main,", "name: second,");
  EXPECT_THAT(ErrorOf(kDeployment, std::string(kPool) + "---\n" + second, ""),
              HasSubstr("(InferencePool second): spec.selector.matchLabels: selects Deployment "
                        "\"llama\", which pool.yaml: document 1 (InferencePool main) selects"));
  // Two Services of one pool serving one name.
  std::string twin = Edited(Edited(kDeployment, "name: llama,", "name: llama-twin,"),
                            "{app: llama}}", "{app: twin}}");
  twin = Edited(twin, "{app: llama, pool: main}", "{app: twin, pool: main}");
  EXPECT_THAT(ErrorOf(std::string(kDeployment) + "---\n" + twin, kPool, ""),
              HasSubstr("which both serve model \"llama-chat\""));
}

TEST(InferenceObjectiveTest, ErrorsNameTheField) {
  EXPECT_THAT(ErrorOf(kDeployment, kPool, Edited(kObjectives, "{name: main}", "{name: gone}")),
              HasSubstr("(InferenceObjective realtime): spec.poolRef.name: InferencePool \"gone\" "
                        "is not among these manifests in namespace \"serving\""));
  EXPECT_THAT(ErrorOf(kDeployment, kPool,
                      Edited(kObjectives, "group: inference.networking.k8s.io",
                             "group: inference.networking.x-k8s.io")),
              HasSubstr("spec.poolRef.group: \"inference.networking.x-k8s.io\""));
  EXPECT_THAT(ErrorOf(kDeployment, kPool, Edited(kObjectives, "kind: InferencePool", "kind: Pool")),
              HasSubstr("spec.poolRef.kind: \"Pool\""));
  EXPECT_THAT(ErrorOf(kDeployment, kPool, Edited(kObjectives, "priority: 100", "priority: high")),
              HasSubstr("spec.priority"));
  EXPECT_THAT(
      ErrorOf(kDeployment, kPool, Edited(kObjectives, "priority: 100", "criticality: Critical")),
      HasSubstr("spec.criticality: unknown field"));
  EXPECT_THAT(ErrorOf(kDeployment, kPool, Edited(kObjectives, "  poolRef: {name: main}\n", "")),
              HasSubstr("spec.poolRef: required field is missing"));
}

TEST(ServedModelNameTest, ServedNameThenModelThenServesPositional) {
  auto names = [](std::vector<std::string> command, std::vector<std::string> args = {}) {
    ProcessTemplate engine;
    engine.command = std::move(command);
    engine.args = std::move(args);
    return VllmServedModelNames(engine);
  };
  EXPECT_THAT(names({"vllm", "serve", "org/m"}), ElementsAre("org/m"));
  EXPECT_THAT(names({"vllm", "serve", "org/m"}, {"--served-model-name", "a", "b", "--port", "1"}),
              ElementsAre("a", "b"));
  EXPECT_THAT(names({"python3", "-m", "vllm.entrypoints.openai.api_server"}, {"--model", "org/m"}),
              ElementsAre("org/m"));
  EXPECT_THAT(names({"vllm", "serve"}, {"--model=org/m", "--served-model-name=x"}),
              ElementsAre("x"));
  EXPECT_THAT(names({"sh", "-c", "ray start --head && vllm serve org/m --port $PORT"}),
              ElementsAre("org/m"));
  EXPECT_THAT(names({"/usr/local/bin/vllm", "serve", "--port", "8000"}), ElementsAre());
  EXPECT_THAT(names({"python", "server.py", "--model", "org/m"}), ElementsAre());
  EXPECT_THAT(names({"/opt/strata/bin/strata", "engine-sim"}, {"--port", "8000", "--model", "m"}),
              ElementsAre("m"));
  EXPECT_THAT(names({"sh", "-c", "exec strata engine-sim --host $POD_IP --model=m"}),
              ElementsAre("m"));
  EXPECT_THAT(names({"engine-sim", "--model", "m"}), ElementsAre());
}

}  // namespace
}  // namespace strata::api
