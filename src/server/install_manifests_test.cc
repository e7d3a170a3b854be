#include "server/install_manifests.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace strata::server {
namespace {

using json = nlohmann::json;
using ::testing::Contains;
using ::testing::ElementsAre;

std::vector<json> Objects() {
  StoreInstallOptions options;
  options.namespace_name = "gpu-platform";
  options.image = "registry.example/strata:1";
  return ControlPlaneObjects(options);
}

const json& Find(const std::vector<json>& objects, const std::string& kind,
                 const std::string& name) {
  for (const json& o : objects)
    if (o["kind"] == kind && o["metadata"]["name"] == name) return o;
  static const json kNone;
  ADD_FAILURE() << kind << " " << name << " not found";
  return kNone;
}

TEST(ControlPlaneObjectsTest, TheDeploymentRunsNodelessLeaderElectedPlanesWithTokens) {
  std::vector<json> objects = Objects();
  const json& deployment = Find(objects, "Deployment", "strata-control-plane");
  EXPECT_EQ(deployment["metadata"]["namespace"], "gpu-platform");
  EXPECT_EQ(deployment["spec"]["replicas"], 2);
  const json& pod = deployment["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], "strata-control-plane");
  EXPECT_EQ(pod["securityContext"]["runAsNonRoot"], true);
  const json& container = pod["containers"][0];
  EXPECT_EQ(container["image"], "registry.example/strata:1");
  EXPECT_THAT(
      container["args"].get<std::vector<std::string>>(),
      ElementsAre("up", "--store=kubernetes", "--no-nodes", "--leader-elect=true",
                  "--leader-elect-resource-namespace=gpu-platform", "--listen=0.0.0.0:7070",
                  "--gateway-listen=0.0.0.0:8000", "--token-file=/etc/strata/api-tokens/tokens",
                  "--data-dir=/var/lib/strata"));
  EXPECT_EQ(container["securityContext"]["readOnlyRootFilesystem"], true);
  EXPECT_EQ(container["readinessProbe"]["httpGet"]["path"], "/readyz");
  EXPECT_EQ(container["readinessProbe"]["httpGet"]["port"], "api");
  // The tokens come from the admin's Secret, read-only; the data dir is the pod's own.
  EXPECT_EQ(pod["volumes"][0]["secret"]["secretName"], "strata-api-tokens");
  EXPECT_EQ(container["volumeMounts"][0]["mountPath"], "/etc/strata/api-tokens");
  EXPECT_EQ(container["volumeMounts"][0]["readOnly"], true);
  EXPECT_TRUE(pod["volumes"][1].contains("emptyDir"));
  EXPECT_EQ(container["volumeMounts"][1]["mountPath"], "/var/lib/strata");
}

TEST(ControlPlaneObjectsTest, ServicesFrontTheApiAndTheGatewayOfEveryPlane) {
  std::vector<json> objects = Objects();
  const json& api = Find(objects, "Service", "strata-api");
  EXPECT_EQ(api["spec"]["selector"], json({{"app.kubernetes.io/name", "strata-control-plane"}}));
  EXPECT_EQ(api["spec"]["ports"][0]["port"], 7070);
  EXPECT_EQ(api["spec"]["ports"][0]["targetPort"], "api");
  const json& gateway = Find(objects, "Service", "strata-gateway");
  EXPECT_EQ(gateway["spec"]["ports"][0]["port"], 8000);
  EXPECT_EQ(gateway["spec"]["ports"][0]["targetPort"], "gateway");
}

TEST(ControlPlaneObjectsTest, ItsIdentityHasTheStoresRulesAndItsLeases) {
  std::vector<json> objects = Objects();
  EXPECT_EQ(Find(objects, "ServiceAccount", "strata-control-plane")["metadata"]["namespace"],
            "gpu-platform");
  EXPECT_FALSE(Find(objects, "ClusterRole", "strata-control-plane")["rules"].empty());
  EXPECT_EQ(Find(objects, "Role", "strata-control-plane-node-leases")["metadata"]["namespace"],
            "kube-node-lease");
  EXPECT_EQ(Find(objects, "Role", "strata-control-plane-lease")["metadata"]["namespace"],
            "gpu-platform");
  std::vector<std::string> kinds;
  for (const json& o : objects) kinds.push_back(o["kind"]);
  EXPECT_THAT(kinds, Contains("RoleBinding").Times(2));
  EXPECT_THAT(kinds, Contains("ClusterRoleBinding").Times(1));
}

TEST(ControlPlaneObjectsTest, ItsGatewayMayReadInferencePoolsAndObjectivesOnly) {
  const std::vector<json> objects = Objects();
  const json& rules = Find(objects, "ClusterRole", "strata-control-plane")["rules"];
  EXPECT_THAT(rules, Contains(json::parse(R"({"apiGroups": ["inference.networking.k8s.io"],
      "resources": ["inferencepools"], "verbs": ["get", "list", "watch"]})")));
  EXPECT_THAT(rules, Contains(json::parse(R"({"apiGroups": ["inference.networking.x-k8s.io"],
      "resources": ["inferenceobjectives"], "verbs": ["get", "list", "watch"]})")));
  for (const json& rule : rules) {
    if (rule["apiGroups"][0].get<std::string>().starts_with("inference.networking")) {
      EXPECT_EQ(rule["verbs"], json({"get", "list", "watch"})) << rule.dump();
    }
  }
}

TEST(InventoryAgentObjectsTest, ADaemonSetOnGpuNodesThatMayPatchNodesOnly) {
  StoreInstallOptions options;
  options.namespace_name = "gpu-platform";
  options.image = "registry.example/strata:1";
  std::vector<json> objects = InventoryAgentObjects(options);
  EXPECT_EQ(Find(objects, "ClusterRole", "strata-inventory")["rules"],
            json::parse(R"([{"apiGroups": [""], "resources": ["nodes"], "verbs": ["patch"]}])"));
  const json& daemonset = Find(objects, "DaemonSet", "strata-inventory");
  EXPECT_EQ(daemonset["metadata"]["namespace"], "gpu-platform");
  const json& pod = daemonset["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], "strata-inventory");
  EXPECT_EQ(pod["securityContext"]["runAsNonRoot"], true);
  const json& terms = pod["affinity"]["nodeAffinity"]
                         ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  ASSERT_EQ(terms.size(), 2u);
  EXPECT_EQ(terms[0]["matchExpressions"][0]["key"], "nvidia.com/gpu.present");
  EXPECT_EQ(pod["tolerations"][0]["key"], "nvidia.com/gpu");
  const json& container = pod["containers"][0];
  EXPECT_THAT(
      container["args"].get<std::vector<std::string>>(),
      ElementsAre("agent", "--inventory", "--name=$(NODE_NAME)", "--metrics-listen=0.0.0.0:9400"));
  EXPECT_EQ(container["env"][0]["valueFrom"]["fieldRef"]["fieldPath"], "spec.nodeName");
  EXPECT_EQ(container["env"][1], json({{"name", "NVIDIA_VISIBLE_DEVICES"}, {"value", "all"}}));
  EXPECT_EQ(container["securityContext"]["readOnlyRootFilesystem"], true);
  EXPECT_FALSE(container["resources"].contains("limits") &&
               container["resources"]["limits"].contains("nvidia.com/gpu"));
  EXPECT_EQ(container["readinessProbe"]["httpGet"]["path"], "/healthz");
}

}  // namespace
}  // namespace strata::server
