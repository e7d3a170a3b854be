#include "kube/install_objects.h"

namespace strata::kube {
namespace {

using json = nlohmann::json;

constexpr const char* kRbacVersion = "rbac.authorization.k8s.io/v1";

json Labels(const std::string& component) {
  return {{"app.kubernetes.io/name", component}, {"app.kubernetes.io/part-of", "strata"}};
}

json Selector(const ComponentSpec& spec) { return {{"app.kubernetes.io/name", spec.name}}; }

json Container(const ComponentSpec& spec) {
  json container = {
      {"name", spec.container_name},
      {"image", spec.image},
      {"command", {"strata"}},
      {"args", spec.args},
      {"resources",
       {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}, {"limits", {{"memory", "1Gi"}}}}},
      {"securityContext",
       {{"allowPrivilegeEscalation", false},
        {"readOnlyRootFilesystem", true},
        {"runAsNonRoot", true},
        {"capabilities", {{"drop", {"ALL"}}}}}}};
  for (const NamedPort& port : spec.ports) {
    container["ports"].push_back(
        {{"name", port.name}, {"containerPort", port.port}, {"protocol", "TCP"}});
  }
  for (const ComponentVolume& volume : spec.volumes) {
    json mount = {{"name", volume.name}, {"mountPath", volume.mount_path}};
    if (!volume.secret.empty()) mount["readOnly"] = true;
    container["volumeMounts"].push_back(std::move(mount));
  }
  if (!spec.env.empty()) container["env"] = spec.env;
  if (!spec.readiness_path.empty() && !spec.ports.empty()) {
    container["readinessProbe"] = {
        {"httpGet", {{"path", spec.readiness_path}, {"port", spec.ports.front().name}}},
        {"periodSeconds", 5}};
  }
  return container;
}

json PodSpec(const ComponentSpec& spec) {
  json pod = {{"serviceAccountName", spec.service_account},
              {"securityContext",
               {{"runAsNonRoot", true},
                {"runAsUser", 65532},
                {"runAsGroup", 65532},
                {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
              {"containers", json::array({Container(spec)})}};
  for (const ComponentVolume& volume : spec.volumes) {
    json source = volume.secret.empty() ? json{{"emptyDir", json::object()}}
                                        : json{{"secret", {{"secretName", volume.secret}}}};
    source["name"] = volume.name;
    pod["volumes"].push_back(std::move(source));
  }
  return pod;
}

}  // namespace

json ComponentMetadata(const std::string& name, const std::string& namespace_name,
                       const std::string& component) {
  json meta = {{"name", name}, {"labels", Labels(component)}};
  if (!namespace_name.empty()) meta["namespace"] = namespace_name;
  return meta;
}

json RestrictedNamespace(const std::string& name) {
  json labels = {{"app.kubernetes.io/part-of", "strata"},
                 {"pod-security.kubernetes.io/enforce", "restricted"}};
  return {{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata", {{"name", name}, {"labels", std::move(labels)}}}};
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
       {"metadata", ComponentMetadata(grant.service_account, install_namespace, grant.name)}},
      {{"apiVersion", kRbacVersion},
       {"kind", "ClusterRole"},
       {"metadata", ComponentMetadata(grant.name, "", grant.name)},
       {"rules", grant.cluster_rules}},
      {{"apiVersion", kRbacVersion},
       {"kind", "ClusterRoleBinding"},
       {"metadata", ComponentMetadata(grant.name, "", grant.name)},
       {"roleRef", role_ref("ClusterRole", grant.name)},
       {"subjects", subjects}}};
  for (const RbacGrant::NamespaceRules& role : grant.namespace_rules) {
    objects.push_back({{"apiVersion", kRbacVersion},
                       {"kind", "Role"},
                       {"metadata", ComponentMetadata(role.role, role.namespace_name, grant.name)},
                       {"rules", role.rules}});
    objects.push_back({{"apiVersion", kRbacVersion},
                       {"kind", "RoleBinding"},
                       {"metadata", ComponentMetadata(role.role, role.namespace_name, grant.name)},
                       {"roleRef", role_ref("Role", role.role)},
                       {"subjects", subjects}});
  }
  return objects;
}

json ComponentDeployment(const ComponentSpec& spec) {
  json pod = PodSpec(spec);
  // Two replicas on one node would both go with it.
  json spread = {{"weight", 100},
                 {"podAffinityTerm",
                  {{"labelSelector", {{"matchLabels", Selector(spec)}}},
                   {"topologyKey", "kubernetes.io/hostname"}}}};
  pod["affinity"] = {
      {"podAntiAffinity",
       {{"preferredDuringSchedulingIgnoredDuringExecution", json::array({spread})}}}};
  return {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", ComponentMetadata(spec.name, spec.namespace_name, spec.name)},
      {"spec",
       {{"replicas", spec.replicas},
        {"selector", {{"matchLabels", Selector(spec)}}},
        {"template", {{"metadata", {{"labels", Labels(spec.name)}}}, {"spec", std::move(pod)}}}}}};
}

json ComponentDaemonSet(const ComponentSpec& spec) {
  json pod = PodSpec(spec);
  if (!spec.node_selector_terms.empty()) {
    pod["affinity"] = {{"nodeAffinity",
                        {{"requiredDuringSchedulingIgnoredDuringExecution",
                          {{"nodeSelectorTerms", spec.node_selector_terms}}}}}};
  }
  if (!spec.tolerations.empty()) pod["tolerations"] = spec.tolerations;
  return {
      {"apiVersion", "apps/v1"},
      {"kind", "DaemonSet"},
      {"metadata", ComponentMetadata(spec.name, spec.namespace_name, spec.name)},
      {"spec",
       {{"selector", {{"matchLabels", Selector(spec)}}},
        {"template", {{"metadata", {{"labels", Labels(spec.name)}}}, {"spec", std::move(pod)}}}}}};
}

json ComponentService(const ComponentSpec& spec, const std::string& name, const NamedPort& port) {
  json ports = json::array(
      {{{"name", port.name}, {"port", port.port}, {"targetPort", port.name}, {"protocol", "TCP"}}});
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", ComponentMetadata(name, spec.namespace_name, spec.name)},
          {"spec", {{"type", "ClusterIP"}, {"selector", Selector(spec)}, {"ports", ports}}}};
}

}  // namespace strata::kube
