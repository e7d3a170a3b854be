// kubecompat::InferencePoolWatch against a real kube-apiserver: a pool's pods, of no manager of
// strata's, become its model's endpoints as they turn Ready, leave them as they turn NotReady or
// are deleted, and the model goes with the pool. The pods are bound to a node no kubelet runs,
// so their status is only what the test writes (as a kubelet would).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/yaml_json.h"
#include "kube_test_cluster.h"
#include "kubecompat/inference_pool_watch.h"

namespace strata::kube::testing {
namespace {

using kubecompat::InferencePoolWatch;
using nlohmann::json;
using ::testing::IsEmpty;

std::string SourceDir() {
  const char* source = std::getenv("STRATA_SOURCE_DIR");
  return source != nullptr && *source != '\0' ? source : STRATA_DEFAULT_SOURCE_DIR;
}

// The test CRD of testdata/kube, created once and served.
void EnsurePoolCrd(Client& client) {
  std::ifstream file(SourceDir() + "/testdata/kube/inferencepool-crd.yaml");
  std::stringstream text;
  text << file.rdbuf();
  Result<std::vector<YamlDocument>> documents = ParseYamlDocuments(text.str());
  ASSERT_TRUE(documents && documents->size() == 1);
  Result<json> created =
      client.Create(resources::kCustomResourceDefinitions, "", documents->front().value);
  ASSERT_TRUE(created || created.error().code() == StatusCode::kAlreadyExists)
      << created.error().ToString();
  ASSERT_TRUE(
      WaitFor(30, [&] { return client.List(kubecompat::kInferencePools, "default").has_value(); }));
}

// A minimal InferenceObjective CRD (GAIE's group is not a protected *.k8s.io one), served.
void EnsureObjectiveCrd(Client& client) {
  const kube::GroupVersionResource& objectives = kubecompat::kInferenceObjectives;
  json crd = {{"apiVersion", "apiextensions.k8s.io/v1"},
              {"kind", "CustomResourceDefinition"},
              {"metadata", {{"name", objectives.resource + "." + objectives.group}}},
              {"spec",
               {{"group", objectives.group},
                {"names",
                 {{"kind", "InferenceObjective"},
                  {"plural", objectives.resource},
                  {"singular", "inferenceobjective"},
                  {"listKind", "InferenceObjectiveList"}}},
                {"scope", "Namespaced"},
                {"versions",
                 {{{"name", objectives.version},
                   {"served", true},
                   {"storage", true},
                   {"schema",
                    {{"openAPIV3Schema",
                      {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}}}}}};
  Result<json> created = client.Create(resources::kCustomResourceDefinitions, "", crd);
  ASSERT_TRUE(created || created.error().code() == StatusCode::kAlreadyExists)
      << created.error().ToString();
  ASSERT_TRUE(WaitFor(30, [&] { return client.List(objectives, "default").has_value(); }));
}

json PoolSelecting(const std::string& name, const std::string& app) {
  return {
      {"apiVersion", "inference.networking.k8s.io/v1"},
      {"kind", "InferencePool"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"selector", {{"matchLabels", {{"app", app}}}}}, {"targetPorts", {{{"number", 8000}}}}}}};
}

json EnginePod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", {{"app", "engine"}}}}},
          {"spec",
           {{"nodeName", "no-kubelet-here"},
            {"containers",
             {{{"name", "engine"},
               {"image", "registry.example/vllm:test"},
               {"command", {"vllm", "serve", "org/chat"}}}}}}}};
}

// Writes the pod's status as a kubelet would: Running at `ip`, Ready or not.
void SetStatus(Client& client, const std::string& ns, const std::string& name,
               const std::string& ip, bool ready) {
  Result<json> pod = client.Get(resources::kPods, ns, name);
  ASSERT_TRUE(pod) << pod.error().ToString();
  (*pod)["status"] = {{"phase", "Running"},
                      {"podIP", ip},
                      {"podIPs", {{{"ip", ip}}}},
                      {"conditions",
                       {{{"type", "Ready"},
                         {"status", ready ? "True" : "False"},
                         {"lastTransitionTime", "2026-12-06T00:00:00Z"}}}}};
  Result<json> written = client.Update(resources::kPods, ns, *pod, {.subresource = "status"});
  ASSERT_TRUE(written) << written.error().ToString();
}

// The endpoints the watch routes model "org/chat" to; "none" when it routes no such model.
std::string Endpoints(InferencePoolWatch& watch) {
  (void)watch.RunOnce();
  for (const gateway::ModelConfig& model : watch.Routes()) {
    if (model.name != "org/chat") continue;
    std::string out;
    for (const std::string& endpoint : model.versions.at(0).endpoints) out += endpoint + " ";
    return out;
  }
  return "none";
}

TEST(InferencePoolWatchTest, RoutesFollowReadinessDeletionAndThePool) {
  std::unique_ptr<Client> client = AdminClient();
  EnsurePoolCrd(*client);
  const std::string ns = NewNamespace(*client, "pools");
  kubecompat::InferencePoolWatchOptions options;
  options.watch_wait = std::chrono::milliseconds(50);
  options.reflector.initial_backoff = std::chrono::milliseconds(100);
  InferencePoolWatch watch(*client, options);
  EXPECT_EQ(Endpoints(watch), "none");

  ASSERT_TRUE(client->Create(resources::kPods, ns, EnginePod("a")));
  ASSERT_TRUE(client->Create(resources::kPods, ns, EnginePod("b")));
  json other = EnginePod("other");
  other["metadata"]["labels"]["app"] = "something-else";
  ASSERT_TRUE(client->Create(resources::kPods, ns, other));
  SetStatus(*client, ns, "other", "127.0.100.9", true);
  ASSERT_TRUE(client->Create(kubecompat::kInferencePools, ns, PoolSelecting("chat", "engine")));
  EXPECT_TRUE(WaitFor(30, [&] { return Endpoints(watch) == ""; }))
      << "the model is routed, with no endpoint while no pod is Ready: " << Endpoints(watch);

  SetStatus(*client, ns, "a", "127.0.100.7", true);
  SetStatus(*client, ns, "b", "127.0.100.8", true);
  EXPECT_TRUE(WaitFor(30, [&] { return Endpoints(watch) == "127.0.100.7:8000 127.0.100.8:8000 "; }))
      << Endpoints(watch);

  SetStatus(*client, ns, "a", "127.0.100.7", false);
  EXPECT_TRUE(WaitFor(30, [&] { return Endpoints(watch) == "127.0.100.8:8000 "; }))
      << "a NotReady pod leaves: " << Endpoints(watch);

  ASSERT_TRUE(client->Delete(resources::kPods, ns, "b", {.grace_period_seconds = 0}));
  EXPECT_TRUE(WaitFor(30, [&] { return Endpoints(watch) == ""; }))
      << "a deleted pod leaves: " << Endpoints(watch);

  ASSERT_TRUE(client->Delete(kubecompat::kInferencePools, ns, "chat"));
  EXPECT_TRUE(WaitFor(30, [&] { return Endpoints(watch) == "none"; }))
      << "the pool deleted, its model goes: " << Endpoints(watch);
  EXPECT_THAT(watch.Routes(), IsEmpty());
}

TEST(InferencePoolWatchTest, AnObjectiveGivesItsPoolsModelItsPriorityClass) {
  std::unique_ptr<Client> client = AdminClient();
  EnsurePoolCrd(*client);
  EnsureObjectiveCrd(*client);
  const std::string ns = NewNamespace(*client, "objectives");
  kubecompat::InferencePoolWatchOptions options;
  options.watch_wait = std::chrono::milliseconds(50);
  InferencePoolWatch watch(*client, options);
  ASSERT_TRUE(client->Create(kubecompat::kInferencePools, ns, PoolSelecting("plain", "none")));
  json objective = {{"apiVersion", "inference.networking.x-k8s.io/v1alpha2"},
                    {"kind", "InferenceObjective"},
                    {"metadata", {{"name", "batch"}}},
                    {"spec", {{"priority", -1}, {"poolRef", {{"name", "plain"}}}}}};
  ASSERT_TRUE(client->Create(kubecompat::kInferenceObjectives, ns, objective));
  // The pool has no pod yet: its model is its own name.
  auto sheddable = [&] {
    (void)watch.RunOnce();
    for (const gateway::ModelConfig& model : watch.Routes()) {
      if (model.name == "plain" && model.objectives.contains("batch")) {
        return model.objectives.at("batch") == gateway::PriorityClass::kSheddable;
      }
    }
    return false;
  };
  EXPECT_TRUE(WaitFor(30, sheddable));
}

}  // namespace
}  // namespace strata::kube::testing
