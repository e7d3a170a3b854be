#include "server/install_manifests.h"

#include "kube/install_objects.h"
#include "kube/leader_election.h"
#include "kubecompat/pytorchjob_operator.h"
#include "kubestore/store_rules.h"
#include "server/control_plane.h"

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
  grant.namespace_rules = {
      {std::string(kName) + "-node-leases", "kube-node-lease", kubestore::NodeLeaseRules()},
      {std::string(kName) + "-lease", defaults.lease_namespace,
       kube::LeaderElectionRules(defaults.lease_name)}};
  std::vector<nlohmann::json> objects = kube::GrantObjects(options.namespace_name, grant);

  kube::ComponentSpec spec;
  spec.name = kName;
  spec.namespace_name = options.namespace_name;
  spec.image = options.image;
  spec.service_account = kName;
  spec.container_name = "control-plane";
  spec.replicas = options.replicas;
  const kube::NamedPort api{"api", kApiPort};
  const kube::NamedPort gateway{"gateway", kGatewayPort};
  spec.ports = {api, gateway};
  spec.args = {"up",
               Flag("store", "kubernetes"),
               "--no-nodes",
               Flag("leader-elect", "true"),
               Flag("listen", "0.0.0.0:" + std::to_string(kApiPort)),
               Flag("gateway-listen", "0.0.0.0:" + std::to_string(kGatewayPort)),
               Flag("token-file", std::string(kTokensDir) + "/tokens"),
               Flag("data-dir", kDataDir)};
  spec.volumes = {{"api-tokens", kTokensDir, options.api_tokens_secret}, {"data", kDataDir, ""}};
  spec.readiness_path = "/readyz";
  objects.push_back(kube::ComponentDeployment(spec));
  objects.push_back(kube::ComponentService(spec, "strata-api", api));
  objects.push_back(kube::ComponentService(spec, "strata-gateway", gateway));
  return objects;
}

}  // namespace strata::server
