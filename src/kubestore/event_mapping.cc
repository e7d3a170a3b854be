// strata's Events as v1 Events (see kind_mapping.h).
#include <string>

#include "api/object_meta.h"
#include "kube/resource.h"
#include "kubestore/kind_mapping.h"

namespace strata::kubestore {
namespace {

// The fields strata's Event and the v1 Event share, with the same names.
constexpr const char* kSharedFields[] = {
    "involvedObject", "type", "reason", "message", "count", "firstTimestamp", "lastTimestamp"};

Result<Json> EventToKube(const store::Object& object, const Json* current) {
  Json out = {{"apiVersion", "v1"}, {"kind", "Event"}};
  out["metadata"] = KubeMetadata(object, current, /*namespaced=*/true);
  for (const char* name : kSharedFields) {
    if (object.body.is_object() && object.body.contains(name)) out[name] = object.body[name];
  }
  out["source"] = {{"component", "strata"}};
  return out;
}

Result<Json> EventFromKube(const Json& object) {
  Json out = {{"apiVersion", api::kApiVersion},
              {"kind", "Event"},
              {"metadata", StrataMetadata(object.value("metadata", Json::object()))}};
  for (const char* name : kSharedFields) {
    if (object.contains(name) && !object[name].is_null()) out[name] = object[name];
  }
  if (out.contains("involvedObject") && out["involvedObject"].is_object()) {
    out["involvedObject"] =
        NonEmptyStrings(out["involvedObject"], {"kind", "name", "namespace", "uid"});
  }
  return out;
}

}  // namespace

KindMapping EventMapping() {
  KindMapping mapping;
  mapping.kind = "Event";
  mapping.resource = kube::resources::kEvents;
  mapping.namespaced = true;
  mapping.to_kube = EventToKube;
  mapping.from_kube = EventFromKube;
  return mapping;
}

}  // namespace strata::kubestore
