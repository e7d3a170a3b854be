// Kubernetes' env valueFrom and envFrom: their field tables, decoding and checks.
#include "api/env_source.h"

#include <array>
#include <string_view>

#include "api/decode_common.h"
#include "api/native_schema.h"

namespace strata::api {
namespace {

using T = FieldType;

constexpr std::array<std::string_view, 7> kEnvFieldPaths = {
    "metadata.name", "metadata.namespace", "metadata.uid",           "spec.nodeName",
    "status.podIP",  "status.hostIP",      "spec.serviceAccountName"};
constexpr std::array<std::string_view, 4> kEnvResources = {"limits.cpu", "limits.memory",
                                                           "requests.cpu", "requests.memory"};

// metadata.labels['key'] or metadata.annotations['key'].
bool IsSubscriptedPath(std::string_view path) {
  for (std::string_view head : {"metadata.labels['", "metadata.annotations['"}) {
    if (path.starts_with(head) && path.ends_with("']") && path.size() > head.size() + 2) {
      return true;
    }
  }
  return false;
}

const TypeSchema* KeySelectorSchema() {
  static const TypeSchema s{
      "KeySelector",
      "One key of a ConfigMap or Secret of the pod's namespace.",
      {{"name", T::kString, "The ConfigMap's or Secret's name.", nullptr, {}, true},
       {"key", T::kString, "The key.", nullptr, {}, true},
       {"optional", T::kBool, "true: a missing object or key leaves the variable unset."}}};
  return &s;
}

const TypeSchema* FieldSelectorSchema() {
  static const TypeSchema s{
      "ObjectFieldSelector",
      "A field of the pod.",
      {{"fieldPath",
        T::kString,
        "metadata.name, metadata.namespace, metadata.uid, metadata.labels['<key>'], "
        "metadata.annotations['<key>'], spec.nodeName, spec.serviceAccountName, status.podIP or "
        "status.hostIP.",
        nullptr,
        {},
        true},
       {"apiVersion", T::kEnum, "v1 (the default).", nullptr, {"v1"}}}};
  return &s;
}

const TypeSchema* ResourceFieldSelectorSchema() {
  static const TypeSchema s{
      "ResourceFieldSelector",
      "A resource of the pod's container.",
      {{"resource", T::kEnum, "What to read.", nullptr,
        std::vector<std::string_view>(kEnvResources.begin(), kEnvResources.end()), true},
       {"containerName", T::kString, "The container (strata's pods have one)."},
       {"divisor", T::kQuantity, "The unit of the value (default 1), rounded up."}}};
  return &s;
}

const TypeSchema* ObjectRefSchema() {
  static const TypeSchema s{
      "EnvFromRef",
      "A ConfigMap or Secret of the pod's namespace whose every key becomes a variable.",
      {{"name", T::kString, "Its name.", nullptr, {}, true},
       {"optional", T::kBool, "true: a missing object adds nothing."}}};
  return &s;
}

}  // namespace

bool IsEnvFieldPath(const std::string& path) {
  for (std::string_view known : kEnvFieldPaths) {
    if (path == known) return true;
  }
  return IsSubscriptedPath(path);
}

bool IsEnvResource(const std::string& resource) {
  for (std::string_view known : kEnvResources) {
    if (resource == known) return true;
  }
  return false;
}

bool TemplateReads(const ProcessTemplate& t, bool secret, std::string_view name) {
  const EnvSourceKind kind = secret ? EnvSourceKind::kSecretKey : EnvSourceKind::kConfigMapKey;
  for (const EnvVar& env : t.env) {
    if (env.value_from && env.value_from->kind == kind && env.value_from->name == name) return true;
  }
  for (const EnvFromSource& source : t.env_from) {
    if (source.secret == secret && source.name == name) return true;
  }
  return false;
}

const TypeSchema* EnvVarSourceSchema() {
  static const TypeSchema s{
      "EnvVarSource",
      "Where a variable's value is read when the pod's processes start; give exactly one.",
      {{"configMapKeyRef", T::kObject, "A key of a ConfigMap.", KeySelectorSchema},
       {"secretKeyRef", T::kObject, "A key of a Secret.", KeySelectorSchema},
       {"fieldRef", T::kObject, "A field of the pod.", FieldSelectorSchema},
       {"resourceFieldRef", T::kObject, "A resource limit or request of the pod.",
        ResourceFieldSelectorSchema}}};
  return &s;
}

const TypeSchema* EnvFromSourceSchema() {
  static const TypeSchema s{
      "EnvFromSource",
      "Every key of a ConfigMap or Secret as a variable; give one of the two.",
      {{"prefix", T::kString, "Put before each key."},
       {"configMapRef", T::kObject, "The ConfigMap.", ObjectRefSchema},
       {"secretRef", T::kObject, "The Secret.", ObjectRefSchema}}};
  return &s;
}

std::optional<EnvVarSource> DecodeEnvVarSource(const FieldView& env_var, FieldErrors& errors) {
  if (!env_var.Has("valueFrom")) return std::nullopt;
  const FieldView from = env_var.Object("valueFrom");
  std::vector<std::string> given;
  for (const char* field : {"configMapKeyRef", "secretKeyRef", "fieldRef", "resourceFieldRef"}) {
    if (from.Has(field)) given.push_back(field);
  }
  if (given.size() != 1) {
    errors.Add(env_var.PathOf("valueFrom"),
               "give exactly one of configMapKeyRef, secretKeyRef, fieldRef, resourceFieldRef");
    return std::nullopt;
  }
  if (!env_var.String("value").empty()) {
    errors.Add(env_var.PathOf("value"), "may not be given with valueFrom");
  }
  EnvVarSource source;
  const FieldView ref = from.Object(given.front());
  if (given.front() == "configMapKeyRef" || given.front() == "secretKeyRef") {
    source.kind =
        given.front() == "secretKeyRef" ? EnvSourceKind::kSecretKey : EnvSourceKind::kConfigMapKey;
    source.name = ref.String("name");
    source.key = ref.String("key");
    source.optional = ref.Bool("optional", false);
  } else if (given.front() == "fieldRef") {
    source.kind = EnvSourceKind::kField;
    source.path = ref.String("fieldPath");
    if (!IsEnvFieldPath(source.path)) {
      errors.Add(ref.PathOf("fieldPath"),
                 "unsupported value " + Quoted(source.path) + ": " +
                     std::string(FieldSelectorSchema()->fields.front().doc));
    }
  } else {
    source.kind = EnvSourceKind::kResourceField;
    source.path = ref.String("resource");
    source.divisor = ref.GetQuantity("divisor");
    if (ref.Has("divisor") && source.divisor.milli() <= 0) {
      errors.Add(ref.PathOf("divisor"), "must be positive");
    }
  }
  return source;
}

std::vector<EnvFromSource> DecodeEnvFrom(const FieldView& parent, std::string_view field,
                                         FieldErrors& errors) {
  std::vector<EnvFromSource> out;
  for (const FieldView& item : parent.ObjectList(field)) {
    const bool config_map = item.Has("configMapRef");
    const bool secret = item.Has("secretRef");
    if (config_map == secret) {
      errors.Add(item.PathOf("configMapRef"), "give one of configMapRef and secretRef");
      continue;
    }
    const FieldView ref = item.Object(secret ? "secretRef" : "configMapRef");
    out.push_back({secret, ref.String("name"), item.String("prefix"), ref.Bool("optional", false)});
  }
  return out;
}

}  // namespace strata::api
