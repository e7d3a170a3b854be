#include "kubestore/store_rules.h"

#include <string>

#include "api/custom_resources.h"
#include "kube/resource.h"

namespace strata::kubestore {
namespace {

using Json = nlohmann::json;

Json Rule(const kube::GroupVersionResource& resource, const std::string& subresource,
          std::vector<std::string> verbs) {
  std::string name = resource.resource;
  if (!subresource.empty()) name += "/" + subresource;
  return {{"apiGroups", {resource.group}}, {"resources", {name}}, {"verbs", std::move(verbs)}};
}

}  // namespace

std::vector<Json> StoreClusterRules() {
  using namespace kube::resources;
  std::vector<Json> rules = api::ControlPlaneRules();
  for (Json rule : {
           Rule(kNodes, "", {"create", "get", "list", "update", "watch"}),
           Rule(kNodes, "status", {"update"}),
           Rule(kPods, "", {"create", "delete", "get", "list", "update", "watch"}),
           Rule(kPods, "status", {"update"}),
           Rule(kPods, "binding", {"create"}),
           Rule(kEvents, "", {"create", "get", "list", "update", "watch"}),
           // A namespace a user's object is written into is made; deleting one is left to the
           // cluster's own users (strata is given no delete of namespaces).
           Rule(kNamespaces, "", {"create", "get", "list", "watch"}),
           // What pods' environments read; written by the cluster's users, never by strata.
           Rule(kConfigMaps, "", {"get", "list", "watch"}),
           Rule(kSecrets, "", {"get", "list", "watch"}),
           Rule(kSubjectAccessReviews, "", {"create"}),
       }) {
    rules.push_back(std::move(rule));
  }
  return rules;
}

std::vector<Json> NodeLeaseRules() {
  return {Rule(kube::resources::kLeases, "", {"create", "get", "update"})};
}

}  // namespace strata::kubestore
