#include "server/object_codec.h"

#include <charconv>

#include "api/annotations.h"
#include "api/encode.h"
#include "api/kinds.h"
#include "api/local_queue_form.h"
#include "api/manifest.h"
#include "api/resource_catalog.h"
#include "common/yaml_json.h"

namespace strata::server {
namespace {

// Whether a document's kind is namespaced: the kind registry's word for compatible kinds, the
// resource catalog's for strata's own. An unknown kind is left alone (its decoding names it).
bool IsNamespacedDocument(const nlohmann::json& document) {
  if (!document.is_object()) return false;
  const nlohmann::json& api_version = document.value("apiVersion", nlohmann::json());
  const nlohmann::json& kind = document.value("kind", nlohmann::json());
  if (!api_version.is_string() || !kind.is_string()) return false;
  const api::KindInfo* info =
      api::FindKind(api_version.get<std::string>(), kind.get<std::string>());
  if (info == nullptr) {
    // A core kind in the form the API serves it (a v1 ConfigMap, Event...).
    const api::ResourceType* served = api::FindResourceTypeByKind(kind.get<std::string>());
    return served != nullptr && served->GroupVersion() == api_version && served->namespaced;
  }
  if (!info->native) return info->namespaced;
  const api::ResourceType* type = api::FindResourceTypeByKind(info->kind);
  return type != nullptr && type->namespaced;
}

}  // namespace

Result<std::vector<api::Object>> DecodeRequestBody(
    std::string_view body, std::string_view source_name,
    const std::optional<std::string>& default_namespace, std::vector<std::string>* warnings) {
  if (size_t bad = InvalidUtf8Offset(body); bad != std::string_view::npos) {
    return Err(InvalidArgumentError(std::string(source_name) + ": byte offset " +
                                    std::to_string(bad) + ": invalid UTF-8"));
  }
  ASSIGN_OR_RETURN(std::vector<YamlDocument> documents, ParseYamlDocuments(body));
  if (documents.empty()) {
    return Err(InvalidArgumentError(std::string(source_name) + ": holds no object"));
  }
  if (default_namespace) {
    for (YamlDocument& document : documents) {
      nlohmann::json& value = document.value;
      if (IsNamespacedDocument(value) && value.contains("metadata") &&
          value["metadata"].is_object() && !value["metadata"].contains("namespace")) {
        value["metadata"]["namespace"] = *default_namespace;
      }
    }
  }
  return api::DecodeParsedManifests({{std::string(source_name), std::move(documents)}}, warnings);
}

void AddWarningHeaders(const std::vector<std::string>& warnings, net::HttpHeaders& headers) {
  for (const std::string& warning : warnings) {
    std::string quoted;
    for (char c : warning) {
      if (c == '"' || c == '\\') quoted += '\\';
      quoted += (c == '\r' || c == '\n') ? ' ' : c;
    }
    headers.emplace_back("Warning", "299 - \"" + quoted + "\"");
  }
}

Result<store::Object> ToStoreObject(const api::Object& object) {
  for (const auto& [key, value] : object.metadata().annotations) {
    if (api::IsKubeletStoreAnnotation(key)) {
      return Err(InvalidArgumentError("metadata.annotations[" + key +
                                      "]: set only by a virtual kubelet, on pods strata did "
                                      "not make; not writable through the API"));
    }
  }
  store::Object stored;
  stored.key = {std::string(object.kind()), object.namespace_name(), object.name()};
  stored.labels = object.metadata().labels;
  stored.body = api::EncodeObject(object);
  const std::string& version = object.metadata().resource_version;
  if (!version.empty()) {
    int64_t parsed = 0;
    auto [end, error] = std::from_chars(version.data(), version.data() + version.size(), parsed);
    if (error != std::errc() || end != version.data() + version.size() || parsed < 0) {
      return Err(InvalidArgumentError(
          "metadata.resourceVersion: expected a decimal integer, got \"" + version + "\""));
    }
    stored.resource_version = parsed;
  }
  return stored;
}

namespace {

bool StatusOwnedByStrata(std::string_view kind) {
  return kind == "Job" || kind == "Service" || kind == "Queue";
}

}  // namespace

void DropOwnedStatus(store::Object& object) {
  if (StatusOwnedByStrata(object.key.kind) && object.body.is_object()) object.body.erase("status");
}

bool CarryStatus(const store::Object& current, store::Object& replacement) {
  if (current.body.is_object() && current.body.contains("status")) {
    replacement.body["status"] = current.body["status"];
  } else {
    DropOwnedStatus(replacement);
  }
  api::CarryLocalQueues(current.body, replacement.body);
  // Compare as the store would write it: the same bookkeeping stamped into both.
  store::Object stamped = replacement;
  stamped.uid = current.uid;
  stamped.resource_version = current.resource_version;
  stamped.creation_timestamp = current.creation_timestamp;
  store::StampMetadata(&stamped);
  return stamped.body != current.body || stamped.labels != current.labels;
}

std::string ObjectReferenceName(std::string_view kind, std::string_view name) {
  const api::ResourceType* type = api::FindResourceTypeByKind(kind);
  std::string prefix = type == nullptr ? std::string(kind) : std::string(type->singular);
  if (type != nullptr && !type->group.empty()) prefix += "." + std::string(type->group);
  return prefix + "/" + std::string(name);
}

}  // namespace strata::server
