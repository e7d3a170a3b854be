// strata.dev kinds as custom resources: the body as strata writes it, under the server's
// metadata.
#include <string>

#include "api/custom_resources.h"
#include "api/object_meta.h"
#include "api/resource_catalog.h"
#include "common/check.h"
#include "kubestore/kind_mapping.h"

namespace strata::kubestore {
namespace {

Result<Json> CustomResourceToKube(const store::Object& object, const Json* current) {
  ASSIGN_OR_RETURN(const KindMapping* mapping, FindKindMapping(object.key.kind));
  Json out = object.body.is_object() ? object.body : Json::object();
  out["apiVersion"] = api::kApiVersion;
  out["kind"] = object.key.kind;
  out["metadata"] = KubeMetadata(object, current, mapping->namespaced);
  return out;
}

Result<Json> CustomResourceFromKube(const Json& object) {
  Json out = object;
  out["metadata"] = StrataMetadata(object.value("metadata", Json::object()));
  return out;
}

}  // namespace

KindMapping CustomResourceMapping(std::string_view kind) {
  const api::ResourceType* type = api::FindResourceTypeByKind(kind);
  STRATA_CHECK(type != nullptr && type->group == api::kStrataGroup);
  KindMapping mapping;
  mapping.kind = type->kind;
  mapping.resource = {std::string(type->group), std::string(type->version),
                      std::string(type->plural)};
  mapping.namespaced = type->namespaced;
  mapping.status_subresource = api::HasStatusSubresource(kind);
  mapping.to_kube = CustomResourceToKube;
  mapping.from_kube = CustomResourceFromKube;
  return mapping;
}

}  // namespace strata::kubestore
