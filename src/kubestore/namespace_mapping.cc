// strata's Namespaces as v1 Namespaces (see kind_mapping.h).
#include "api/object_meta.h"
#include "kube/resource.h"
#include "kubestore/kind_mapping.h"

namespace strata::kubestore {
namespace {

Result<Json> NamespaceToKube(const store::Object& object, const Json* current) {
  Json out = {{"apiVersion", "v1"}, {"kind", "Namespace"}};
  out["metadata"] = KubeMetadata(object, current, /*namespaced=*/false, /*keep_foreign=*/true);
  return out;
}

Result<Json> NamespaceFromKube(const Json& object) {
  return Json{{"apiVersion", api::kApiVersion},
              {"kind", "Namespace"},
              {"metadata", StrataMetadata(object.value("metadata", Json::object()))}};
}

}  // namespace

KindMapping NamespaceMapping() {
  KindMapping mapping;
  mapping.kind = "Namespace";
  mapping.resource = kube::resources::kNamespaces;
  mapping.to_kube = NamespaceToKube;
  mapping.from_kube = NamespaceFromKube;
  return mapping;
}

}  // namespace strata::kubestore
