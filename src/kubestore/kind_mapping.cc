#include "kubestore/kind_mapping.h"

#include <algorithm>
#include <string>

#include "api/custom_resources.h"
#include "common/json_member.h"

namespace strata::kubestore {

const std::vector<KindMapping>& AllKindMappings() {
  static const std::vector<KindMapping> kMappings = [] {
    std::vector<KindMapping> out = {PodMapping(),       NodeMapping(),      EventMapping(),
                                    NamespaceMapping(), ConfigMapMapping(), SecretMapping()};
    for (const api::CustomResourceNames& names : api::CustomResourceKinds()) {
      out.push_back(CustomResourceMapping(names.kind));
    }
    return out;
  }();
  return kMappings;
}

Result<const KindMapping*> FindKindMapping(std::string_view kind) {
  for (const KindMapping& mapping : AllKindMappings()) {
    if (mapping.kind == kind) return &mapping;
  }
  return Err(InvalidArgumentError("kind \"" + std::string(kind) +
                                  "\": strata keeps no such kind on Kubernetes"));
}

Json NonEmptyStrings(const Json& object, std::initializer_list<const char*> names) {
  Json out = Json::object();
  for (const char* name : names) {
    const Json& value = MemberOrNull(object, name);
    if (value.is_string() && !value.empty()) out[name] = value;
  }
  return out;
}

Result<store::Object> FromKube(const KindMapping& mapping, const Json& object) {
  ASSIGN_OR_RETURN(Json body, mapping.from_kube(object));
  return store::ObjectFromBody(mapping.kind, body);
}

namespace {

// The labels or annotations to send: the object's, and with `keep_foreign` those of `current`
// that are not strata's (keys outside strata.dev/ that the object does not set).
Json MergedMap(const Json& ours, const Json* current, bool keep_foreign) {
  Json out = ours.is_object() ? ours : Json::object();
  if (keep_foreign && current != nullptr && current->is_object()) {
    for (const auto& [key, value] : current->items()) {
      if (!key.starts_with("strata.dev/") && !out.contains(key)) out[key] = value;
    }
  }
  return out;
}

}  // namespace

Json KubeMetadata(const store::Object& object, const Json* current, bool namespaced,
                  bool keep_foreign) {
  Json metadata = current != nullptr ? current->value("metadata", Json::object()) : Json::object();
  metadata.erase("managedFields");
  metadata["name"] = object.key.name;
  if (namespaced) metadata["namespace"] = object.key.namespace_name;
  Json labels = Json::object();
  for (const auto& [key, value] : object.labels) labels[key] = value;
  const Json* current_labels =
      metadata.contains("labels") ? &static_cast<const Json&>(metadata)["labels"] : nullptr;
  labels = MergedMap(labels, current_labels, keep_foreign);
  const Json& body_metadata = object.body.is_object() && object.body.contains("metadata")
                                  ? object.body["metadata"]
                                  : Json::object();
  const Json ours = body_metadata.is_object() ? body_metadata.value("annotations", Json::object())
                                              : Json::object();
  const Json* current_annotations = metadata.contains("annotations")
                                        ? &static_cast<const Json&>(metadata)["annotations"]
                                        : nullptr;
  Json annotations = MergedMap(ours, current_annotations, keep_foreign);
  metadata["labels"] = std::move(labels);
  if (annotations.empty()) {
    metadata.erase("annotations");
  } else {
    metadata["annotations"] = std::move(annotations);
  }
  if (object.resource_version != 0) {
    metadata["resourceVersion"] = std::to_string(object.resource_version);
  } else if (current == nullptr) {
    metadata.erase("resourceVersion");
  }
  if (current == nullptr) {
    for (const char* owned : {"uid", "creationTimestamp", "generation"}) metadata.erase(owned);
  }
  return metadata;
}

Json StrataMetadata(const Json& metadata, const std::vector<std::string_view>& drop) {
  Json out = Json::object();
  for (const char* field : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    if (metadata.contains(field)) out[field] = metadata[field];
  }
  for (const char* map : {"labels", "annotations"}) {
    if (!metadata.contains(map) || !metadata[map].is_object()) continue;
    Json kept = Json::object();
    for (const auto& [key, value] : metadata[map].items()) {
      if (std::find(drop.begin(), drop.end(), key) == drop.end()) kept[key] = value;
    }
    if (!kept.empty()) out[map] = std::move(kept);
  }
  return out;
}

}  // namespace strata::kubestore
