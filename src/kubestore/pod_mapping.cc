// strata's Pods as v1 Pods (see kind_mapping.h).
#include <string>

#include "api/annotations.h"
#include "api/object_meta.h"
#include "api/pod.h"
#include "api/pod_v1_form.h"
#include "common/json_member.h"
#include "kube/resource.h"
#include "kubestore/kind_mapping.h"

namespace strata::kubestore {
namespace {

const std::string kOwnedSelector = std::string(api::kManagedByLabel) + "=" + api::kManagedByStrata;

Result<Json> PodToKube(const store::Object& object, const Json* current) {
  const Json& spec = MemberOrNull(object.body, "spec");
  Json out = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  out["metadata"] = KubeMetadata(object, current, /*namespaced=*/true, /*keep_foreign=*/true);
  out["metadata"]["labels"][api::kManagedByLabel] = api::kManagedByStrata;
  out["metadata"]["annotations"][api::kPodSpecAnnotation] = spec.is_object() ? spec.dump() : "{}";
  if (current != nullptr) {
    out["spec"] = MemberOrNull(*current, "spec");
  } else {
    ASSIGN_OR_RETURN(out["spec"], api::V1PodSpec(spec));
  }
  out["status"] = api::V1PodStatus(MemberOrNull(object.body, "status"),
                                   current != nullptr ? MemberOrNull(*current, "status") : Json(),
                                   api::PodServes(object.body));
  return out;
}

Result<Json> PodFromKube(const Json& object) {
  const Json& metadata = MemberOrNull(object, "metadata");
  const Json& spec_text =
      MemberOrNull(MemberOrNull(metadata, "annotations"), api::kPodSpecAnnotation);
  if (!spec_text.is_string()) {
    return Err(InvalidArgumentError(std::string("metadata.annotations[") + api::kPodSpecAnnotation +
                                    "]: missing on a pod labelled " +
                                    std::string(api::kManagedByLabel) + "=strata"));
  }
  Json spec = Json::parse(spec_text.get<std::string>(), nullptr, /*allow_exceptions=*/false);
  if (!spec.is_object()) {
    return Err(InvalidArgumentError(std::string("metadata.annotations[") + api::kPodSpecAnnotation +
                                    "]: not a JSON object"));
  }
  const Json& kube_spec = MemberOrNull(object, "spec");
  if (MemberOrNull(kube_spec, "nodeName").is_string() && !kube_spec["nodeName"].empty()) {
    spec["nodeName"] = kube_spec["nodeName"];
  } else {
    spec.erase("nodeName");
  }
  const Json& kube_status = MemberOrNull(object, "status");
  Json status = {
      {"phase", MemberOrNull(kube_status, "phase").is_string() && kube_status["phase"] != "Unknown"
                    ? kube_status["phase"]
                    : Json("Pending")}};
  status.update(NonEmptyStrings(kube_status, {"reason", "message", "podIP"}));
  for (const Json& container : MemberOrNull(kube_status, "containerStatuses")) {
    if (MemberOrNull(container, "name") != Json(api::kPodContainerName)) continue;
    if (MemberOrNull(container, "restartCount").is_number_integer() &&
        container["restartCount"].get<int64_t>() > 0) {
      status["restartCount"] = container["restartCount"];
    }
    const Json& terminated = MemberOrNull(MemberOrNull(container, "state"), "terminated");
    if (MemberOrNull(terminated, "exitCode").is_number_integer()) {
      status["exitCode"] = terminated["exitCode"];
    }
  }
  return Json{
      {"apiVersion", api::kApiVersion},
      {"kind", "Pod"},
      {"metadata", StrataMetadata(metadata, {api::kManagedByLabel, api::kPodSpecAnnotation})},
      {"spec", std::move(spec)},
      {"status", std::move(status)}};
}

}  // namespace

KindMapping PodMapping() {
  KindMapping mapping;
  mapping.kind = "Pod";
  mapping.resource = kube::resources::kPods;
  mapping.namespaced = true;
  mapping.status_subresource = true;
  mapping.owned_selector = kOwnedSelector;
  mapping.to_kube = PodToKube;
  mapping.from_kube = PodFromKube;
  return mapping;
}

}  // namespace strata::kubestore
