// strata's ConfigMaps and Secrets as the cluster's own v1 ConfigMaps and Secrets (see
// kind_mapping.h): the store keeps them in Kubernetes' shape already, so the fields pass as they
// are.
#include "api/object_meta.h"
#include "common/json_member.h"
#include "kube/resource.h"
#include "kubestore/kind_mapping.h"

namespace strata::kubestore {
namespace {

// The fields of a ConfigMap or a Secret besides its metadata.
constexpr const char* kConfigMapFields[] = {"data", "binaryData", "immutable"};
constexpr const char* kSecretFields[] = {"type", "data", "immutable"};

template <size_t N>
Json Copied(Json out, const Json& from, const char* const (&fields)[N]) {
  for (const char* field : fields) {
    const Json& value = MemberOrNull(from, field);
    if (!value.is_null()) out[field] = value;
  }
  return out;
}

Result<Json> ConfigMapToKube(const store::Object& object, const Json* current) {
  Json out = {{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", KubeMetadata(object, current, /*namespaced=*/true)}};
  return Copied(std::move(out), object.body, kConfigMapFields);
}

Result<Json> ConfigMapFromKube(const Json& object) {
  Json out = {{"apiVersion", api::kApiVersion},
              {"kind", "ConfigMap"},
              {"metadata", StrataMetadata(object.value("metadata", Json::object()))}};
  return Copied(std::move(out), object, kConfigMapFields);
}

Result<Json> SecretToKube(const store::Object& object, const Json* current) {
  Json out = {{"apiVersion", "v1"},
              {"kind", "Secret"},
              {"metadata", KubeMetadata(object, current, /*namespaced=*/true)}};
  return Copied(std::move(out), object.body, kSecretFields);
}

Result<Json> SecretFromKube(const Json& object) {
  Json out = {{"apiVersion", api::kApiVersion},
              {"kind", "Secret"},
              {"metadata", StrataMetadata(object.value("metadata", Json::object()))}};
  return Copied(std::move(out), object, kSecretFields);
}

}  // namespace

KindMapping ConfigMapMapping() {
  KindMapping mapping;
  mapping.kind = "ConfigMap";
  mapping.resource = kube::resources::kConfigMaps;
  mapping.namespaced = true;
  mapping.to_kube = ConfigMapToKube;
  mapping.from_kube = ConfigMapFromKube;
  return mapping;
}

KindMapping SecretMapping() {
  KindMapping mapping;
  mapping.kind = "Secret";
  mapping.resource = kube::resources::kSecrets;
  mapping.namespaced = true;
  mapping.to_kube = SecretToKube;
  mapping.from_kube = SecretFromKube;
  return mapping;
}

}  // namespace strata::kubestore
