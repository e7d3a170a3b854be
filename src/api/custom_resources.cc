#include "api/custom_resources.h"

#include <string>

#include "api/compat_schema.h"
#include "api/kinds.h"
#include "api/openapi_schema.h"
#include "common/check.h"

namespace strata::api {
namespace {

using json = nlohmann::json;

constexpr std::string_view kPartOf = "app.kubernetes.io/part-of";

// Kubernetes' own words for the fields every object has.
constexpr std::string_view kApiVersionDoc =
    "APIVersion defines the versioned schema of this representation of an object. Servers should "
    "convert recognized schemas to the latest internal value, and may reject unrecognized "
    "values.";
constexpr std::string_view kKindDoc =
    "Kind is a string value representing the REST resource this object represents. Servers may "
    "infer this from the endpoint the client submits requests to. In CamelCase.";

// The whole object's schema: the document's fields, with metadata left to the API server (a CRD
// may not constrain it) and apiVersion and kind, which the server fills, not required.
json RootSchema(const TypeSchema& document) {
  json properties = json::object();
  json required = json::array();
  for (const FieldSpec& field : document.fields) {
    std::string name(field.name);
    if (name == "apiVersion" || name == "kind") {
      properties[name] = {{"type", "string"},
                          {"description", name == "kind" ? kKindDoc : kApiVersionDoc}};
      continue;
    }
    if (name == "metadata") {
      properties[name] = {{"type", "object"}};
      continue;
    }
    properties[name] = OpenApiFieldSchema(field);
    if (field.required) required.push_back(name);
  }
  json schema = {{"type", "object"}, {"description", document.doc}, {"properties", properties}};
  if (!required.empty()) schema["required"] = std::move(required);
  return schema;
}

const TypeSchema& DocumentSchema(std::string_view kind) {
  const KindInfo* info = FindKind(kApiVersion, kind);
  STRATA_CHECK(info != nullptr && info->native);
  return *info->schema();
}

}  // namespace

const std::vector<CustomResourceNames>& CustomResourceKinds() {
  static const std::vector<CustomResourceNames> kKinds = {
      {"Queue",
       {"squeue"},
       {{"Cohort", "string", ".spec.cohort", "Queues of one cohort lend each other unused quota."},
        {"Admitted", "integer", ".status.admittedWorkloads", "Workloads holding quota."},
        {"Pending", "integer", ".status.pendingWorkloads", "Workloads waiting."}}},
      {"ResourceFlavor", {"sflavor"}, {}},
      {"Job",
       {"sjob"},
       {{"Replicas", "integer", ".spec.replicas", "Pods (nodes), placed all together."},
        {"GPUs/Pod", "string", ".spec.resources.gpu", "GPUs each pod needs."},
        {"Queue", "string", ".spec.queue", "The Queue that admits the job."},
        {"Phase", "string", ".status.phase", "Pending, Running, Restarting, Succeeded or Failed."},
        {"Restarts", "integer", ".status.restartCount", "Whole-group restarts after failures."}}},
      {"Service",
       {"ssvc"},
       {{"Model", "string", ".spec.model", "The name clients put in the request's \"model\"."},
        {"Ready", "integer", ".status.readyReplicas", "Replicas serving."},
        {"Replicas", "integer", ".status.replicas", "Replicas not being drained."},
        {"Min", "integer", ".spec.minReplicas", "Fewest replicas."},
        {"Max", "integer", ".spec.maxReplicas", "Most replicas."}}},
      {"Tenant",
       {"stenant"},
       {{"Tokens/Min", "integer", ".spec.tokensPerMinute", "Token quota per minute (0: none)."},
        {"Priority", "string", ".spec.priorityClass", "critical, standard or sheddable."}}},
      // Kept as strata's own on a cluster too (the Kubernetes-API store): Kueue's CRD, where
      // installed, is another group's.
      {"WorkloadPriorityClass",
       {"swpc"},
       {{"Value", "integer", ".spec.value", "The priority its workloads get."}}},
  };
  return kKinds;
}

bool HasStatusSubresource(std::string_view kind) {
  return DocumentSchema(kind).Find("status") != nullptr;
}

namespace {

// What a CustomResourceDefinition says of one kind, whatever its group.
struct Definition {
  std::string_view group;
  std::string_view version;
  std::string_view kind;
  std::string_view plural;
  std::string_view singular;
  bool namespaced = true;
  const std::vector<std::string_view>* short_names = nullptr;
  const std::vector<PrinterColumn>* columns = nullptr;
  std::string_view category;  // "" for none
  json schema;                // openAPIV3Schema
  bool status_subresource = false;
};

json DefinitionObject(const Definition& d) {
  json short_names = json::array();
  if (d.short_names != nullptr) {
    for (std::string_view name : *d.short_names) short_names.push_back(name);
  }
  json columns = json::array();
  if (d.columns != nullptr) {
    for (const PrinterColumn& column : *d.columns) {
      columns.push_back({{"name", column.name},
                         {"type", column.type},
                         {"jsonPath", column.json_path},
                         {"description", column.description}});
    }
  }
  columns.push_back(
      {{"name", "Age"}, {"type", "date"}, {"jsonPath", ".metadata.creationTimestamp"}});
  json version = {{"name", d.version},
                  {"served", true},
                  {"storage", true},
                  {"schema", {{"openAPIV3Schema", d.schema}}},
                  {"additionalPrinterColumns", std::move(columns)}};
  if (d.status_subresource) version["subresources"] = {{"status", json::object()}};
  json names = {{"kind", d.kind},
                {"listKind", std::string(d.kind) + "List"},
                {"plural", d.plural},
                {"singular", d.singular}};
  if (!short_names.empty()) names["shortNames"] = std::move(short_names);
  if (!d.category.empty()) names["categories"] = {d.category};
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata",
           {{"name", std::string(d.plural) + "." + std::string(d.group)},
            {"labels", {{kPartOf, "strata"}}}}},
          {"spec",
           {{"group", d.group},
            {"names", std::move(names)},
            {"scope", d.namespaced ? "Namespaced" : "Cluster"},
            {"versions", json::array({std::move(version)})}}}};
}

}  // namespace

json CustomResourceDefinition(const ResourceType& type, const CustomResourceNames& names) {
  STRATA_CHECK(type.group == kStrataGroup);
  Definition d;
  d.group = type.group;
  d.version = type.version;
  d.kind = type.kind;
  d.plural = type.plural;
  d.singular = type.singular;
  d.namespaced = type.namespaced;
  d.short_names = &names.short_names;
  d.columns = &names.columns;
  d.category = "strata";
  d.schema = RootSchema(DocumentSchema(type.kind));
  d.status_subresource = HasStatusSubresource(type.kind);
  return DefinitionObject(d);
}

std::vector<json> CustomResourceDefinitions() {
  std::vector<json> out;
  for (const CustomResourceNames& names : CustomResourceKinds()) {
    const ResourceType* type = FindResourceTypeByKind(names.kind);
    STRATA_CHECK(type != nullptr);
    out.push_back(CustomResourceDefinition(*type, names));
  }
  return out;
}

bool IsStrataDefinition(const json& definition) {
  const json& labels = definition.value("metadata", json::object()).value("labels", json::object());
  return labels.is_object() && labels.value(std::string(kPartOf), "") == "strata";
}

std::vector<json> CompatCustomResourceDefinitions() {
  static const std::vector<PrinterColumn> kColumns = {
      {"State", "string", ".status.conditions[-1:].type",
       "The newest condition: Created, Running, Restarting, Succeeded or Failed."}};
  Definition d;
  d.group = "kubeflow.org";
  d.version = "v1";
  d.kind = "PyTorchJob";
  d.plural = "pytorchjobs";
  d.singular = "pytorchjob";
  d.columns = &kColumns;
  d.schema = RootSchema(*PyTorchJobSchema());
  d.schema["properties"]["status"] = OpenApiObjectSchema(*KubeflowJobStatusSchema());
  d.status_subresource = true;
  return {DefinitionObject(d)};
}

std::vector<json> ControlPlaneRules() {
  json resources = json::array();
  json statuses = json::array();
  for (const CustomResourceNames& names : CustomResourceKinds()) {
    const ResourceType* type = FindResourceTypeByKind(names.kind);
    STRATA_CHECK(type != nullptr);
    resources.push_back(type->plural);
    if (HasStatusSubresource(type->kind)) {
      statuses.push_back(std::string(type->plural) + "/status");
    }
  }
  return {{{"apiGroups", {kStrataGroup}},
           {"resources", std::move(resources)},
           {"verbs", {"create", "delete", "get", "list", "patch", "update", "watch"}}},
          {{"apiGroups", {kStrataGroup}},
           {"resources", std::move(statuses)},
           {"verbs", {"get", "patch", "update"}}}};
}

std::vector<json> AggregatedUserRoles() {
  json resources = json::array();
  json statuses = json::array();
  for (const CustomResourceNames& names : CustomResourceKinds()) {
    const ResourceType* type = FindResourceTypeByKind(names.kind);
    // Roles bound in a namespace reach only its namespaced kinds; Queues, flavors and tenants
    // are the cluster administrator's.
    if (type == nullptr || !type->namespaced) continue;
    resources.push_back(type->plural);
    statuses.push_back(std::string(type->plural) + "/status");
  }
  auto role = [](std::string name, json labels, json rules) {
    labels[std::string(kPartOf)] = "strata";
    return json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                {"kind", "ClusterRole"},
                {"metadata", {{"name", std::move(name)}, {"labels", std::move(labels)}}},
                {"rules", std::move(rules)}};
  };
  json edit_rule = {
      {"apiGroups", {kStrataGroup}},
      {"resources", resources},
      {"verbs",
       {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}}};
  json view_rule = {
      {"apiGroups", {kStrataGroup}}, {"resources", resources}, {"verbs", {"get", "list", "watch"}}};
  json status_rule = {{"apiGroups", {kStrataGroup}}, {"resources", statuses}, {"verbs", {"get"}}};
  // The compatible kinds strata serves (CompatCustomResourceDefinitions), likewise: where
  // Kubeflow's operator owns them instead, its own aggregated roles grant the same.
  json compat_edit = edit_rule;
  compat_edit["apiGroups"] = {"kubeflow.org"};
  compat_edit["resources"] = {"pytorchjobs"};
  json compat_view = view_rule;
  compat_view["apiGroups"] = {"kubeflow.org"};
  compat_view["resources"] = {"pytorchjobs"};
  json compat_status = {
      {"apiGroups", {"kubeflow.org"}}, {"resources", {"pytorchjobs/status"}}, {"verbs", {"get"}}};
  return {role("strata-edit",
               {{"rbac.authorization.k8s.io/aggregate-to-admin", "true"},
                {"rbac.authorization.k8s.io/aggregate-to-edit", "true"}},
               json::array({edit_rule, status_rule, compat_edit, compat_status})),
          role("strata-view", {{"rbac.authorization.k8s.io/aggregate-to-view", "true"}},
               json::array({view_rule, status_rule, compat_view, compat_status}))};
}

}  // namespace strata::api
