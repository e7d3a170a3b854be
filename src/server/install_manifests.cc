#include "server/install_manifests.h"

#include "kube/install_objects.h"
#include "kube/leader_election.h"
#include "kubecompat/inference_pool_routes.h"
#include "kubecompat/pytorchjob_operator.h"
#include "kubestore/store_rules.h"
#include "server/control_plane.h"
#include "server/inventory_agent.h"

namespace strata::server {
namespace {

constexpr const char* kName = "strata-control-plane";
constexpr const char* kTokensDir = "/etc/strata/api-tokens";
constexpr const char* kDataDir = "/var/lib/strata";
constexpr int kApiPort = 7070;
constexpr int kGatewayPort = 8000;

std::string Flag(const std::string& name, const std::string& value) {
  return "--" + name + "=" + value;
}

// A component of the install that runs as its own ServiceAccount of the same name.
kube::ComponentSpec OwnAccountComponent(const std::string& name, const std::string& container,
                                        const StoreInstallOptions& options) {
  kube::ComponentSpec spec;
  spec.name = name;
  spec.namespace_name = options.namespace_name;
  spec.image = options.image;
  spec.service_account = name;
  spec.container_name = container;
  return spec;
}

}  // namespace

std::vector<nlohmann::json> ControlPlaneObjects(const StoreInstallOptions& options) {
  const ControlPlaneOptions defaults;
  kube::RbacGrant grant;
  grant.name = kName;
  grant.service_account = kName;
  grant.cluster_rules = kubestore::StoreClusterRules();
  for (nlohmann::json& rule : kubecompat::PyTorchJobOperatorRules()) {
    grant.cluster_rules.push_back(std::move(rule));
  }
  // The gateway routes the cluster's GAIE InferencePools (the pods they select are read under
  // the store's rules on pods, which do not ask whose pods they are).
  for (nlohmann::json& rule : kubecompat::InferencePoolRules()) {
    grant.cluster_rules.push_back(std::move(rule));
  }
  grant.namespace_rules = {
      {std::string(kName) + "-node-leases", "kube-node-lease", kubestore::NodeLeaseRules()},
      {std::string(kName) + "-lease", options.namespace_name,
       kube::LeaderElectionRules(defaults.election.lease_name)}};
  std::vector<nlohmann::json> objects = kube::GrantObjects(options.namespace_name, grant);

  kube::ComponentSpec spec = OwnAccountComponent(kName, "control-plane", options);
  spec.replicas = options.replicas;
  const kube::NamedPort api{"api", kApiPort};
  const kube::NamedPort gateway{"gateway", kGatewayPort};
  spec.ports = {api, gateway};
  spec.args = {"up", Flag("store", "kubernetes"), "--no-nodes", Flag("leader-elect", "true"),
               // The election's Lease in the install's namespace: no grant in kube-system.
               Flag("leader-elect-resource-namespace", options.namespace_name),
               Flag("listen", "0.0.0.0:" + std::to_string(kApiPort)),
               Flag("gateway-listen", "0.0.0.0:" + std::to_string(kGatewayPort)),
               Flag("token-file", std::string(kTokensDir) + "/tokens"), Flag("data-dir", kDataDir)};
  spec.volumes = {{"api-tokens", kTokensDir, options.api_tokens_secret}, {"data", kDataDir, ""}};
  spec.readiness_path = "/readyz";
  objects.push_back(kube::ComponentDeployment(spec));
  objects.push_back(kube::ComponentService(spec, "strata-api", api));
  objects.push_back(kube::ComponentService(spec, "strata-gateway", gateway));
  return objects;
}

std::vector<nlohmann::json> InventoryAgentObjects(const StoreInstallOptions& options) {
  constexpr const char* kInventory = "strata-inventory";
  kube::RbacGrant grant;
  grant.name = kInventory;
  grant.service_account = kInventory;
  grant.cluster_rules = InventoryAgentRules();
  std::vector<nlohmann::json> objects = kube::GrantObjects(options.namespace_name, grant);

  kube::ComponentSpec spec = OwnAccountComponent(kInventory, "inventory", options);
  const kube::NamedPort metrics{"metrics", 9400};
  spec.ports = {metrics};
  spec.args = {"agent", "--inventory", Flag("name", "$(NODE_NAME)"),
               Flag("metrics-listen", "0.0.0.0:" + std::to_string(metrics.port))};
  spec.env = {
      {{"name", "NODE_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}},
      {{"name", "NVIDIA_VISIBLE_DEVICES"}, {"value", "all"}},
      {{"name", "NVIDIA_DRIVER_CAPABILITIES"}, {"value", "utility"}}};
  spec.readiness_path = "/healthz";
  auto term = [](const char* label) {
    return nlohmann::json{
        {"matchExpressions", {{{"key", label}, {"operator", "In"}, {"values", {"true"}}}}}};
  };
  spec.node_selector_terms = {term("nvidia.com/gpu.present"),
                              term("feature.node.kubernetes.io/pci-10de.present")};
  spec.tolerations = {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}}};
  objects.push_back(kube::ComponentDaemonSet(spec));
  return objects;
}

}  // namespace strata::server
