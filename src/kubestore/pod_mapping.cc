// strata's Pods as v1 Pods (see kind_mapping.h).
#include <string>

#include "api/annotations.h"
#include "api/object_meta.h"
#include "api/pod.h"
#include "common/json_member.h"
#include "common/quantity.h"
#include "kube/resource.h"
#include "kubestore/kind_mapping.h"

namespace strata::kubestore {
namespace {

// The image of a process that strata's node agent runs itself: a container runtime never sees
// it (a virtual kubelet runs the command as a process), but the API requires one.
constexpr std::string_view kProcessImage = "strata.dev/process";
constexpr std::string_view kGpuResource = "nvidia.com/gpu";
const std::string kOwnedSelector = std::string(api::kManagedByLabel) + "=" + api::kManagedByStrata;

// The container limits of strata's resources: cpu and memory as written, GPUs when whole (a
// share of a GPU has no device-plugin resource; strata's own annotation carries it).
Result<Json> Limits(const Json& resources) {
  Json limits = Json::object();
  for (const char* name : {"cpu", "memory"}) {
    if (MemberOrNull(resources, name).is_string()) limits[name] = resources[name];
  }
  if (MemberOrNull(resources, "gpu").is_string()) {
    ASSIGN_OR_RETURN(Quantity gpu, Quantity::Parse(resources["gpu"].get<std::string>()));
    if (gpu.milli() > 0 && gpu.milli() % 1000 == 0) {
      limits[std::string(kGpuResource)] = std::to_string(gpu.Units());
    }
  }
  return limits;
}

Result<Json> Container(const Json& spec) {
  const Json& process = MemberOrNull(spec, "template");
  Json container = {{"name", api::kPodContainerName}};
  container["image"] = MemberOrNull(process, "image").is_string() && !process["image"].empty()
                           ? process["image"]
                           : Json(kProcessImage);
  for (const char* name : {"command", "args", "env", "workingDir"}) {
    const Json& value = MemberOrNull(process, name);
    if (!value.is_null() && !value.empty()) container[name] = value;
  }
  ASSIGN_OR_RETURN(Json limits, Limits(MemberOrNull(spec, "resources")));
  if (!limits.empty()) container["resources"] = {{"limits", limits}};
  container["securityContext"] = {{"allowPrivilegeEscalation", false}};
  return container;
}

// The v1 spec of a new pod. Only what Kubernetes lets change later (nothing of it, for strata)
// is ever sent again: updates keep the server's spec.
Result<Json> NewPodSpec(const Json& spec) {
  ASSIGN_OR_RETURN(Json container, Container(spec));
  Json out = {
      {"schedulerName", "strata"},
      {"restartPolicy",
       MemberOrNull(spec, "restartPolicy").is_string() ? spec["restartPolicy"] : Json("Always")},
      {"containers", Json::array({std::move(container)})},
      {"enableServiceLinks", false},
      {"automountServiceAccountToken", false},
      {"securityContext", {{"runAsNonRoot", true}}}};
  if (MemberOrNull(spec, "nodeName").is_string() && !spec["nodeName"].empty()) {
    out["nodeName"] = spec["nodeName"];
  }
  const Json& tolerations = MemberOrNull(spec, "tolerations");
  if (tolerations.is_array() && !tolerations.empty()) out["tolerations"] = tolerations;
  return out;
}

// Whether the pod serves, as a v1 Ready condition says: Running, and for the leader of a
// Service's replica once its readiness probe passed (strata.dev/ready-at); never while draining.
bool Ready(const Json& body) {
  if (MemberOrNull(MemberOrNull(body, "status"), "phase") != Json("Running")) return false;
  const Json& annotations = MemberOrNull(MemberOrNull(body, "metadata"), "annotations");
  if (MemberOrNull(annotations, api::kDrainingAnnotation).is_string()) return false;
  const Json& owner = MemberOrNull(MemberOrNull(body, "spec"), "owner");
  // rank is left out when 0
  const bool leads_a_replica = MemberOrNull(owner, "kind") == Json("Service") &&
                               (MemberOrNull(owner, "rank").is_null() || owner["rank"] == Json(0));
  return !leads_a_replica || MemberOrNull(annotations, api::kReadyAtAnnotation).is_string();
}

// Sets the condition `type` of a v1 pod status to `value`.
void SetCondition(Json& status, const char* type, bool value) {
  Json& conditions = status["conditions"];
  if (!conditions.is_array()) conditions = Json::array();
  const char* text = value ? "True" : "False";
  for (Json& condition : conditions) {
    if (MemberOrNull(condition, "type") == Json(type)) {
      if (condition["status"] != Json(text)) condition = {{"type", type}, {"status", text}};
      return;
    }
  }
  conditions.push_back({{"type", type}, {"status", text}});
}

// The v1 status of strata's: the phase, why, the pod's IP (as its host's), the Ready condition,
// and the container's restarts and exit code. A pod that is only Pending keeps the server's status
// as it is.
Json PodStatus(const Json& status, const Json* current, bool ready) {
  Json out = current != nullptr ? MemberOrNull(*current, "status") : Json();
  if (!out.is_object()) out = Json::object();
  const bool only_pending = !status.is_object() || status == Json{{"phase", "Pending"}};
  if (only_pending && !out.contains("containerStatuses")) {
    out["phase"] = "Pending";
    return out;
  }
  out["phase"] = MemberOrNull(status, "phase").is_string() ? status["phase"] : Json("Pending");
  for (const char* name : {"reason", "message"}) {
    if (MemberOrNull(status, name).is_string()) {
      out[name] = status[name];
    } else {
      out.erase(name);
    }
  }
  // Pods share their node's network: the pod's address is its host's.
  if (MemberOrNull(status, "podIP").is_string() && !status["podIP"].empty()) {
    for (const char* name : {"podIP", "hostIP"}) out[name] = status["podIP"];
    for (const char* name : {"podIPs", "hostIPs"}) {
      out[name] = Json::array({{{"ip", status["podIP"]}}});
    }
  }
  const std::string phase = out["phase"].get<std::string>();
  Json container = {
      {"name", api::kPodContainerName},
      {"ready", ready},
      {"restartCount",
       MemberOrNull(status, "restartCount").is_number_integer() ? status["restartCount"] : Json(0)},
      {"image", std::string(kProcessImage)},
      {"imageID", ""}};
  if (MemberOrNull(status, "exitCode").is_number_integer()) {
    container["state"] = {{"terminated", {{"exitCode", status["exitCode"]}}}};
  } else if (phase == "Running") {
    container["state"] = {{"running", Json::object()}};
  } else {
    container["state"] = {{"waiting", Json::object()}};
  }
  if (current != nullptr) {
    for (const Json& existing :
         MemberOrNull(MemberOrNull(*current, "status"), "containerStatuses")) {
      if (MemberOrNull(existing, "name") == Json(api::kPodContainerName) &&
          existing.contains("image")) {
        container["image"] = existing["image"];
      }
    }
  }
  out["containerStatuses"] = Json::array({std::move(container)});
  SetCondition(out, "Ready", ready);
  SetCondition(out, "ContainersReady", ready);
  return out;
}

Result<Json> PodToKube(const store::Object& object, const Json* current) {
  const Json& spec = MemberOrNull(object.body, "spec");
  Json out = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  out["metadata"] = KubeMetadata(object, current, /*namespaced=*/true, /*keep_foreign=*/true);
  out["metadata"]["labels"][api::kManagedByLabel] = api::kManagedByStrata;
  out["metadata"]["annotations"][api::kPodSpecAnnotation] = spec.is_object() ? spec.dump() : "{}";
  if (current != nullptr) {
    out["spec"] = MemberOrNull(*current, "spec");
  } else {
    ASSIGN_OR_RETURN(out["spec"], NewPodSpec(spec));
  }
  out["status"] = PodStatus(MemberOrNull(object.body, "status"), current, Ready(object.body));
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
