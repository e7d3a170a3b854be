// Kubernetes' v1 ConfigMap and Secret: their field tables, decoders and the immutable rule.
#include <cctype>

#include "api/config_data.h"
#include "api/decode_common.h"
#include "api/kinds.h"
#include "api/native_schema.h"
#include "common/base64.h"
#include "common/json_member.h"

namespace strata::api {
namespace {

using T = FieldType;

std::vector<FieldSpec> CoreDocumentHead() {
  return {{"apiVersion", T::kString, "v1", nullptr, {}, true},
          {"kind", T::kString, "The kind of the object.", nullptr, {}, true},
          {"metadata",
           T::kObject,
           "Name, namespace, labels and bookkeeping.",
           ObjectMetaSchema,
           {},
           true}};
}

// Kubernetes' rule for a data key: a file name made of letters, digits, '-', '_' and '.'.
void CheckKey(const std::string& key, const std::string& path, FieldErrors& errors) {
  bool valid =
      !key.empty() && key.size() <= 253 && key != "." && key != ".." && key.rfind("..", 0) != 0;
  for (char c : key) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      valid = false;
    }
  }
  if (!valid) {
    errors.Add(path,
               "a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
               "(e.g. 'key.name', or 'KEY_NAME', or 'key-name'), got " +
                   Quoted(key));
  }
}

// The bytes of a map of base64 values, reporting each value that is not base64.
std::map<std::string, std::string> DecodeBase64Map(const FieldView& parent, std::string_view field,
                                                   FieldErrors& errors) {
  std::map<std::string, std::string> out;
  const std::string path = parent.PathOf(field);
  for (const auto& [key, text] : parent.StringMap(field)) {
    CheckKey(key, KeyPath(path, key), errors);
    std::optional<std::string> bytes = Base64Decode(text);
    if (!bytes) {
      errors.Add(KeyPath(path, key),
                 "must be base64 (RFC 4648, padded), as Kubernetes carries "
                 "bytes; give text in stringData");
      continue;
    }
    out[key] = std::move(*bytes);
  }
  return out;
}

void CheckSize(const std::string& path, const std::map<std::string, std::string>& a,
               const std::map<std::string, std::string>& b, FieldErrors& errors) {
  size_t total = 0;
  for (const auto* map : {&a, &b}) {
    for (const auto& [key, value] : *map) total += key.size() + value.size();
  }
  if (total > kMaxConfigDataBytes) {
    errors.Add(path, "too long: must have at most " + std::to_string(kMaxConfigDataBytes) +
                         " bytes, got " + std::to_string(total));
  }
}

}  // namespace

const TypeSchema* ConfigMapDocumentSchema() {
  static const TypeSchema s = [] {
    TypeSchema d{"ConfigMap", "Configuration data that pods read into their environment.",
                 CoreDocumentHead()};
    d.fields.push_back({"data", T::kStringMap, "Text values by key."});
    d.fields.push_back({"binaryData", T::kStringMap, "Byte values by key, base64-encoded."});
    d.fields.push_back({"immutable", T::kBool, "true: data and binaryData never change again."});
    return d;
  }();
  return &s;
}

const TypeSchema* SecretDocumentSchema() {
  static const TypeSchema s = [] {
    TypeSchema d{"Secret",
                 "Confidential data that pods read into their environment; never printed.",
                 CoreDocumentHead()};
    d.fields.push_back({"type", T::kString,
                        "Opaque (default), kubernetes.io/basic-auth, kubernetes.io/tls, "
                        "kubernetes.io/dockerconfigjson, ... (recorded)."});
    d.fields.push_back({"data", T::kStringMap, "Byte values by key, base64-encoded."});
    d.fields.push_back(
        {"stringData", T::kStringMap, "Text values by key, merged into data when written."});
    d.fields.push_back({"immutable", T::kBool, "true: data never changes again."});
    return d;
  }();
  return &s;
}

void DecodeNativeConfigMap(const FieldView& doc, DecodedDocument& out) {
  ConfigMap config;
  config.metadata = DecodeMetadata(doc.Object("metadata"), true, false, out.errors);
  const std::string data_path = doc.PathOf("data");
  for (auto& [key, value] : doc.StringMap("data")) {
    CheckKey(key, KeyPath(data_path, key), out.errors);
    config.data[key] = std::move(value);
  }
  config.binary_data = DecodeBase64Map(doc, "binaryData", out.errors);
  for (const auto& [key, value] : config.binary_data) {
    if (config.data.count(key) > 0) {
      out.errors.Add(KeyPath(doc.PathOf("binaryData"), key),
                     "duplicate of data[" + key + "]: a key is in data or binaryData, not both");
    }
  }
  CheckSize(data_path, config.data, config.binary_data, out.errors);
  config.immutable = doc.Bool("immutable", false);
  out.objects.push_back(std::move(config));
}

void DecodeNativeSecret(const FieldView& doc, DecodedDocument& out) {
  Secret secret;
  secret.metadata = DecodeMetadata(doc.Object("metadata"), true, false, out.errors);
  secret.type = doc.String("type", "Opaque");
  if (secret.type.empty()) secret.type = "Opaque";
  secret.data = DecodeBase64Map(doc, "data", out.errors);
  const std::string string_path = doc.PathOf("stringData");
  for (auto& [key, value] : doc.StringMap("stringData")) {
    CheckKey(key, KeyPath(string_path, key), out.errors);
    secret.data[key] = std::move(value);
  }
  CheckSize(doc.PathOf("data"), secret.data, {}, out.errors);
  secret.immutable = doc.Bool("immutable", false);
  out.objects.push_back(std::move(secret));
}

Status CheckImmutableUpdate(const nlohmann::json& current, const nlohmann::json& replacement) {
  const std::string kind = StringMemberOr(current, "kind");
  if (kind != "ConfigMap" && kind != "Secret") return Status::Ok();
  if (MemberOrNull(current, "immutable") != nlohmann::json(true)) return Status::Ok();
  const std::string name = StringMemberOr(MemberOrNull(current, "metadata"), "name");
  for (const char* field : {"immutable", "data", "binaryData", "type"}) {
    if (MemberOrNull(current, field) != MemberOrNull(replacement, field)) {
      return InvalidArgumentError(kind + " \"" + name + "\" is invalid: " + field +
                                  ": Forbidden: field is immutable when `immutable` is set");
    }
  }
  return Status::Ok();
}

}  // namespace strata::api
