#include "kubesched/install_manifests.h"

#include "kube/leader_election.h"
#include "kube/resource.h"
#include "kubesched/kueue_quotas.h"

namespace strata::kubesched {
namespace {

using json = nlohmann::json;

constexpr const char* kRbacVersion = "rbac.authorization.k8s.io/v1";
constexpr const char* kAppName = "strata-scheduler";

json Rule(const kube::GroupVersionResource& resource, const std::string& subresource,
          std::vector<std::string> verbs) {
  std::string name = resource.resource;
  if (!subresource.empty()) name += "/" + subresource;
  return {{"apiGroups", {resource.group}}, {"resources", {name}}, {"verbs", std::move(verbs)}};
}

json Labels(const std::string& app = kAppName) {
  return {{"app.kubernetes.io/name", app}, {"app.kubernetes.io/part-of", "strata"}};
}

json Metadata(const std::string& name, const std::string& namespace_name = "",
              const std::string& app = kAppName) {
  json meta = {{"name", name}, {"labels", Labels(app)}};
  if (!namespace_name.empty()) meta["namespace"] = namespace_name;
  return meta;
}

json Deployment(const InstallOptions& options) {
  json args = {"up",
               "--kubernetes",
               "--scheduler-name=" + options.scheduler_name,
               "--leader-elect=true",
               "--leader-elect-resource-namespace=" + options.namespace_name,
               "--leader-elect-resource-name=" + options.lease_name};
  json container = {
      {"name", "scheduler"},
      {"image", options.image},
      {"command", {"strata"}},
      {"args", std::move(args)},
      {"resources",
       {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}, {"limits", {{"memory", "1Gi"}}}}},
      {"securityContext",
       {{"allowPrivilegeEscalation", false},
        {"readOnlyRootFilesystem", true},
        {"runAsNonRoot", true},
        {"capabilities", {{"drop", {"ALL"}}}}}}};
  json selector = {{"app.kubernetes.io/name", kAppName}};
  // Two replicas on one node would both go with it.
  json spread = {{"weight", 100},
                 {"podAffinityTerm",
                  {{"labelSelector", {{"matchLabels", selector}}},
                   {"topologyKey", "kubernetes.io/hostname"}}}};
  json pod_spec = {
      {"serviceAccountName", options.service_account},
      {"securityContext",
       {{"runAsNonRoot", true},
        {"runAsUser", 65532},
        {"runAsGroup", 65532},
        {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
      {"affinity",
       {{"podAntiAffinity",
         {{"preferredDuringSchedulingIgnoredDuringExecution", json::array({spread})}}}}},
      {"containers", json::array({std::move(container)})}};
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", Metadata(kAppName, options.namespace_name)},
          {"spec",
           {{"replicas", options.replicas},
            {"selector", {{"matchLabels", selector}}},
            {"template", {{"metadata", {{"labels", Labels()}}}, {"spec", std::move(pod_spec)}}}}}};
}

}  // namespace

std::vector<json> SchedulerClusterRules() {
  using kube::resources::kEvents;
  using kube::resources::kNodes;
  using kube::resources::kPods;
  return {
      Rule(kNodes, "", {"list", "watch"}),
      Rule(kPods, "", {"create", "delete", "get", "list", "watch"}),
      Rule(kPods, "binding", {"create"}),
      Rule(kPods, "status", {"patch"}),
      Rule(kPods, "eviction", {"create"}),
      Rule(kEvents, "", {"create", "patch"}),
      {{"apiGroups", {kueue_resources::kClusterQueues.group}},
       {"resources",
        {kueue_resources::kClusterQueues.resource, kueue_resources::kLocalQueues.resource,
         kueue_resources::kResourceFlavors.resource,
         kueue_resources::kWorkloadPriorityClasses.resource}},
       {"verbs", {"list", "watch"}}},
      Rule(kueue_resources::kClusterQueues, "status", {"patch"}),
  };
}

json ControlPlaneNamespace(const InstallOptions& options) {
  json labels = {{"app.kubernetes.io/part-of", "strata"},
                 {"pod-security.kubernetes.io/enforce", "restricted"}};
  return {{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata", {{"name", options.namespace_name}, {"labels", std::move(labels)}}}};
}

std::vector<json> GrantObjects(const std::string& install_namespace, const RbacGrant& grant) {
  auto role_ref = [](const char* kind, const std::string& role) {
    return json{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", kind}, {"name", role}};
  };
  const json subjects = json::array({{{"kind", "ServiceAccount"},
                                      {"name", grant.service_account},
                                      {"namespace", install_namespace}}});
  std::vector<json> objects = {
      {{"apiVersion", "v1"},
       {"kind", "ServiceAccount"},
       {"metadata", Metadata(grant.service_account, install_namespace, grant.name)}},
      {{"apiVersion", kRbacVersion},
       {"kind", "ClusterRole"},
       {"metadata", Metadata(grant.name, "", grant.name)},
       {"rules", grant.cluster_rules}},
      {{"apiVersion", kRbacVersion},
       {"kind", "ClusterRoleBinding"},
       {"metadata", Metadata(grant.name, "", grant.name)},
       {"roleRef", role_ref("ClusterRole", grant.name)},
       {"subjects", subjects}}};
  for (const RbacGrant::NamespaceRules& role : grant.namespace_rules) {
    objects.push_back({{"apiVersion", kRbacVersion},
                       {"kind", "Role"},
                       {"metadata", Metadata(role.role, role.namespace_name, grant.name)},
                       {"rules", role.rules}});
    objects.push_back({{"apiVersion", kRbacVersion},
                       {"kind", "RoleBinding"},
                       {"metadata", Metadata(role.role, role.namespace_name, grant.name)},
                       {"roleRef", role_ref("Role", role.role)},
                       {"subjects", subjects}});
  }
  return objects;
}

std::vector<json> SchedulerObjects(const InstallOptions& options) {
  RbacGrant grant;
  grant.name = kAppName;
  grant.service_account = options.service_account;
  grant.cluster_rules = SchedulerClusterRules();
  grant.namespace_rules = {{std::string(kAppName) + "-lease", options.namespace_name,
                            kube::LeaderElectionRules(options.lease_name)}};
  std::vector<json> objects = GrantObjects(options.namespace_name, grant);
  objects.push_back(Deployment(options));
  return objects;
}

}  // namespace strata::kubesched
