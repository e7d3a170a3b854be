#include "api/openapi_document.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "api/kinds.h"
#include "api/openapi_schema.h"
#include "api/resource_catalog.h"
#include "api/source_form.h"
#include "api/strategic_merge_patch.h"
#include "common/check.h"

namespace strata::api {
namespace {

using json = nlohmann::json;

constexpr std::string_view kJson = "application/json";
constexpr std::string_view kMergePatch = "application/merge-patch+json";
constexpr std::string_view kJsonPatch = "application/json-patch+json";
constexpr std::string_view kStrategicMergePatch = "application/strategic-merge-patch+json";

// Whether `type` is served in its own project's document shape: a source-served kind or Kueue's
// LocalQueue.
bool ServedAsDocument(const ResourceType& type) {
  return IsSourceServedType(type) || &StorageVersionOf(type) == &LocalQueueType();
}

std::string SchemaName(const ResourceType& type) {
  if (ServedAsDocument(type)) {
    return std::string(type.group) + "." + std::string(type.version) + "." + std::string(type.kind);
  }
  return "dev.strata." + std::string(kStrataVersion) + "." + std::string(type.kind);
}

json GroupVersionKind(const ResourceType& type) {
  return {{"group", type.group}, {"version", type.version}, {"kind", type.kind}};
}

// Marks the lists the strategic merge patch merges by key, as Kubernetes' own schemas do: those
// of `schema`, the served form's (a Pod's v1 spec has no strata template).
void MarkMergingLists(const ResourceType& type, json& schema) {
  for (const MergingList& list : MergingLists()) {
    if (list.kind != type.kind) continue;
    json* at = &schema;
    for (size_t start = 0; at != nullptr && start <= list.path.size();) {
      size_t dot = list.path.find('.', start);
      if (dot == std::string_view::npos) dot = list.path.size();
      if (at->value("type", "") == "array") at = &(*at)["items"];  // a list's items' fields
      json& properties = (*at)["properties"];
      auto member = properties.find(std::string(list.path.substr(start, dot - start)));
      at = member == properties.end() ? nullptr : &*member;
      start = dot + 1;
    }
    if (at == nullptr) continue;
    STRATA_CHECK((*at)["type"] == "array");
    (*at)["x-kubernetes-patch-merge-key"] = list.merge_key;
    (*at)["x-kubernetes-patch-strategy"] = "merge";
  }
}

json ComponentSchema(const ResourceType& type) {
  // A pod as Kubernetes' clients read and write it (api/pod_v1_form.h): the v1 Pod manifest's;
  // a source-served kind (a batch/v1 Job) as its manifest's (api/source_form.h).
  const bool source = ServedAsDocument(type);
  const KindInfo* info = type.kind == "Pod" ? FindKind("v1", "Pod")
                         : source           ? FindKind(type.GroupVersion(), type.kind)
                                            : FindKind(kApiVersion, type.kind);
  STRATA_CHECK(info != nullptr && (info->native || type.kind == "Pod" || source));
  json schema = OpenApiObjectSchema(*info->schema());
  // The merging lists named for a kind are those of its native form.
  if (!source) MarkMergingLists(type, schema);
  schema["x-kubernetes-group-version-kind"] = json::array({GroupVersionKind(type)});
  return schema;
}

json Content(std::vector<std::string_view> media_types, const json& schema) {
  json content = json::object();
  for (std::string_view media : media_types) content[std::string(media)] = {{"schema", schema}};
  return content;
}

// One operation on `type`'s objects: what it takes (`request` media types, none for a read or a
// delete) and what it answers.
json Operation(const ResourceType& type, std::string_view action,
               std::vector<std::string_view> request) {
  const json object = {{"$ref", "#/components/schemas/" + SchemaName(type)}};
  json operation = {
      {"operationId", fmt::format("{}{}", action, type.kind)},
      {"x-kubernetes-action", action},
      {"x-kubernetes-group-version-kind", GroupVersionKind(type)},
      {"responses", {{"200", {{"description", "OK"}, {"content", Content({kJson}, object)}}}}}};
  if (!request.empty()) {
    // strata checks every field itself, strictly: kubectl leaves validation to it.
    operation["parameters"] = json::array(
        {{{"name", "fieldValidation"}, {"in", "query"}, {"schema", {{"type", "string"}}}}});
    const json body = action == "patch" ? json{{"type", "object"}} : object;
    operation["requestBody"] = {{"content", Content(std::move(request), body)}, {"required", true}};
  }
  return operation;
}

json PathParameters(const ResourceType& type, bool named) {
  json parameters = json::array();
  auto parameter = [&](const char* name) {
    parameters.push_back(
        {{"name", name}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}});
  };
  if (named) parameter("name");
  if (type.namespaced) parameter("namespace");
  return parameters;
}

void AddPaths(const ResourceType& type, json& paths) {
  const std::string namespace_name = type.namespaced ? "{namespace}" : "";
  std::vector<std::string_view> patches = {kJsonPatch, kMergePatch};
  if (AcceptsStrategicMergePatch(PatchKindOf(type))) patches.push_back(kStrategicMergePatch);

  json& collection = paths[type.Path(namespace_name, "")];
  collection["parameters"] = PathParameters(type, false);
  collection["get"] = Operation(type, "list", {});
  collection["post"] = Operation(type, "post", {kJson});

  const std::string item_path = type.Path(namespace_name, "{name}");
  json& item = paths[item_path];
  item["parameters"] = PathParameters(type, true);
  item["get"] = Operation(type, "get", {});
  item["put"] = Operation(type, "put", {kJson});
  item["patch"] = Operation(type, "patch", patches);
  item["delete"] = Operation(type, "delete", {});

  if (type.kind == "Pod" || type.kind == "Node") {
    json& status = paths[item_path + "/status"];
    status["parameters"] = PathParameters(type, true);
    status["get"] = Operation(type, "get", {});
    status["put"] = Operation(type, "put", {kJson});
    status["patch"] = Operation(type, "patch", patches);
  }
}

struct Documents {
  std::map<std::string, json, std::less<>> by_path;  // "api/v1" -> its document
  json index;
};

const Documents& AllDocuments() {
  static const Documents kDocuments = [] {
    Documents out;
    std::vector<const ResourceType*> types = SourceServedTypes();
    types.push_back(&LocalQueueType());
    for (const ResourceType* older : KueueV1beta1Types()) types.push_back(older);
    for (const ResourceType& type : AllResourceTypes()) types.push_back(&type);
    for (const ResourceType* served : types) {
      const ResourceType& type = *served;
      std::string path = type.GroupVersionPath().substr(1);  // "api/v1"
      json& document = out.by_path[path];
      if (document.is_null()) {
        document = {{"openapi", "3.0.0"},
                    {"info", {{"title", "strata"}, {"version", type.GroupVersion()}}},
                    {"paths", json::object()},
                    {"components", {{"schemas", json::object()}}}};
      }
      AddPaths(type, document["paths"]);
      document["components"]["schemas"][SchemaName(type)] = ComponentSchema(type);
    }
    json paths = json::object();
    for (const auto& [path, document] : out.by_path) {
      const size_t hash = std::hash<std::string>{}(document.dump());
      paths[path] = {{"serverRelativeURL", fmt::format("/openapi/v3/{}?hash={:016X}", path, hash)}};
    }
    out.index = {{"paths", std::move(paths)}};
    return out;
  }();
  return kDocuments;
}

}  // namespace

const nlohmann::json& OpenApiV3Index() { return AllDocuments().index; }

const nlohmann::json* OpenApiV3Document(std::string_view group_version_path) {
  const Documents& documents = AllDocuments();
  auto it = documents.by_path.find(group_version_path);
  return it == documents.by_path.end() ? nullptr : &it->second;
}

}  // namespace strata::api
