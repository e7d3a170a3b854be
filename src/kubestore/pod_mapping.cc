// strata's Pods as v1 Pods (see kind_mapping.h).
#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>

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

bool AgentReported(std::string_view key) {
  return std::find(std::begin(api::kAgentReportedAnnotations),
                   std::end(api::kAgentReportedAnnotations),
                   key) != std::end(api::kAgentReportedAnnotations);
}

// The agent's reports (api::kAgentReportedAnnotations) go in the v1 status, as conditions of the
// annotations' names (a qualified name, as a pod condition type of anyone's but the kubelet's
// must be) whose message is the value: the node's credentials may write them there. Those of
// `annotations` replace the ones `status` had.
void PutReports(const Json& annotations, Json& status) {
  Json& conditions = status["conditions"];
  if (!conditions.is_array()) conditions = Json::array();
  Json kept = Json::array();
  for (Json& condition : conditions) {
    const Json& type = MemberOrNull(condition, "type");
    if (!type.is_string() || !AgentReported(type.get<std::string>())) {
      kept.push_back(std::move(condition));
    }
  }
  conditions = std::move(kept);
  for (std::string_view key : api::kAgentReportedAnnotations) {
    const Json& value = MemberOrNull(annotations, std::string(key));
    if (!value.is_string()) continue;
    conditions.push_back({{"type", key}, {"status", "True"}, {"message", value}});
  }
  // As the server keeps it (an empty list is left out): no status write for nothing.
  if (conditions.empty()) status.erase("conditions");
}

Result<Json> PodToKube(const store::Object& object, const Json* current) {
  const Json& spec = MemberOrNull(object.body, "spec");
  Json out = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  out["metadata"] = KubeMetadata(object, current, /*namespaced=*/true, /*keep_foreign=*/true);
  out["metadata"]["labels"][api::kManagedByLabel] = api::kManagedByStrata;
  out["metadata"]["annotations"][api::kPodSpecAnnotation] = spec.is_object() ? spec.dump() : "{}";
  for (std::string_view key : api::kAgentReportedAnnotations) {
    out["metadata"]["annotations"].erase(std::string(key));
  }
  if (current != nullptr) {
    out["spec"] = MemberOrNull(*current, "spec");
  } else {
    ASSIGN_OR_RETURN(out["spec"], api::V1PodSpec(spec));
  }
  out["status"] = api::V1PodStatus(MemberOrNull(object.body, "status"),
                                   current != nullptr ? MemberOrNull(*current, "status") : Json(),
                                   api::PodServes(object.body));
  PutReports(MemberOrNull(MemberOrNull(object.body, "metadata"), "annotations"), out["status"]);
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
  // The agent's reports, from the status (a pod written before they moved there keeps its
  // annotations until they are written again).
  Json strata_metadata = StrataMetadata(metadata, {api::kManagedByLabel, api::kPodSpecAnnotation});
  for (const Json& condition : MemberOrNull(kube_status, "conditions")) {
    const Json& type = MemberOrNull(condition, "type");
    if (!type.is_string() || !AgentReported(type.get<std::string>())) continue;
    if (MemberOrNull(condition, "message").is_string()) {
      strata_metadata["annotations"][type.get<std::string>()] = condition["message"];
    }
  }
  return Json{{"apiVersion", api::kApiVersion},
              {"kind", "Pod"},
              {"metadata", std::move(strata_metadata)},
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
