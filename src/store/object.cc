#include "store/object.h"

#include <charconv>
#include <string_view>

namespace strata::store {
namespace {

constexpr size_t kMaxNameLength = 253;

Status ValidateName(std::string_view field, std::string_view value, bool allow_empty) {
  if (value.empty()) {
    if (allow_empty) return Status::Ok();
    return InvalidArgumentError(std::string(field) + ": must not be empty");
  }
  if (value.size() > kMaxNameLength) {
    return InvalidArgumentError(std::string(field) + ": longer than 253 characters");
  }
  for (size_t i = 0; i < value.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (c == '/' || c < 0x20 || c == 0x7f) {
      return InvalidArgumentError(std::string(field) + ": invalid character at offset " +
                                  std::to_string(i));
    }
  }
  return Status::Ok();
}

}  // namespace

std::string ObjectKey::Describe() const {
  std::string qualified = namespace_name.empty() ? name : namespace_name + "/" + name;
  return kind + " \"" + qualified + "\"";
}

Status ValidateObject(const Object& object) {
  if (Status s = ValidateName("kind", object.key.kind, false); !s.ok()) return s;
  if (Status s = ValidateName("metadata.name", object.key.name, false); !s.ok()) return s;
  if (Status s = ValidateName("metadata.namespace", object.key.namespace_name, true); !s.ok()) {
    return s;
  }
  for (const auto& [key, value] : object.labels) {
    if (key.empty()) return InvalidArgumentError("metadata.labels: a key must not be empty");
  }
  if (!object.body.is_object() && !object.body.is_null()) {
    return InvalidArgumentError("body: must be a JSON object");
  }
  return Status::Ok();
}

void StampMetadata(Object* object) {
  if (object->body.is_null()) object->body = nlohmann::json::object();
  nlohmann::json& metadata = object->body["metadata"];
  if (!metadata.is_object()) metadata = nlohmann::json::object();
  metadata["name"] = object->key.name;
  if (object->key.namespace_name.empty()) {
    metadata.erase("namespace");
  } else {
    metadata["namespace"] = object->key.namespace_name;
  }
  if (object->labels.empty()) {
    metadata.erase("labels");
  } else {
    metadata["labels"] = object->labels;
  }
  metadata["uid"] = object->uid;
  metadata["resourceVersion"] = std::to_string(object->resource_version);
  metadata["creationTimestamp"] = FormatRfc3339(object->creation_timestamp);
}

Result<int64_t> ParseResourceVersion(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) {
    return Err(
        InvalidArgumentError("metadata.resourceVersion: expected a non-negative integer, got \"" +
                             std::string(text) + "\""));
  }
  return value;
}

Result<Object> ObjectFromBody(std::string_view kind, const nlohmann::json& body) {
  if (!body.is_object() || !body.contains("metadata") || !body["metadata"].is_object()) {
    return Err(InvalidArgumentError("metadata: expected an object in what the server sent"));
  }
  const nlohmann::json& metadata = body["metadata"];
  Object object;
  object.key.kind = std::string(kind);
  object.key.namespace_name = metadata.value("namespace", "");
  object.key.name = metadata.value("name", "");
  if (metadata.contains("labels") && metadata["labels"].is_object()) {
    for (const auto& [key, value] : metadata["labels"].items()) {
      if (value.is_string()) object.labels[key] = value.get<std::string>();
    }
  }
  object.uid = metadata.value("uid", "");
  std::string version = metadata.value("resourceVersion", "");
  if (!version.empty()) {
    ASSIGN_OR_RETURN(object.resource_version, ParseResourceVersion(version));
  }
  if (std::optional<TimePoint> created = ParseRfc3339(metadata.value("creationTimestamp", ""))) {
    object.creation_timestamp = *created;
  }
  object.body = body;
  return object;
}

}  // namespace strata::store
