#include "api/pod_v1_form.h"

#include <algorithm>
#include <string>

#include "api/annotations.h"
#include "api/object_meta.h"
#include "api/pod.h"
#include "common/json_member.h"
#include "common/quantity.h"

namespace strata::api {
namespace {

using Json = nlohmann::json;

constexpr char kGpuResource[] = "nvidia.com/gpu";

// The container limits of strata's resources: cpu and memory as enforced (their limits, else
// the reservation), GPUs when whole (a share of a GPU has no device-plugin resource).
Result<Json> Limits(const Json& resources) {
  Json limits = Json::object();
  for (const char* name : {"cpu", "memory"}) {
    const Json& limit = MemberOrNull(MemberOrNull(resources, "limits"), name);
    if (limit.is_string()) {
      limits[name] = limit;
    } else if (MemberOrNull(resources, name).is_string()) {
      limits[name] = resources[name];
    }
  }
  if (MemberOrNull(resources, "gpu").is_string()) {
    ASSIGN_OR_RETURN(Quantity gpu, Quantity::Parse(resources["gpu"].get<std::string>()));
    if (gpu.milli() > 0 && gpu.milli() % 1000 == 0) {
      limits[kGpuResource] = std::to_string(gpu.Units());
    }
  }
  return limits;
}

Result<Json> Container(const Json& spec) {
  const Json& process = MemberOrNull(spec, "template");
  Json container = {{"name", kPodContainerName}};
  container["image"] = MemberOrNull(process, "image").is_string() && !process["image"].empty()
                           ? process["image"]
                           : Json(kProcessImage);
  for (const char* name : {"command", "args", "env", "envFrom", "workingDir"}) {
    const Json& value = MemberOrNull(process, name);
    if (!value.is_null() && !value.empty()) container[name] = value;
  }
  const Json& resources = MemberOrNull(spec, "resources");
  ASSIGN_OR_RETURN(Json limits, Limits(resources));
  if (!limits.empty()) container["resources"] = {{"limits", limits}};
  // A reservation below its limit is the request Kubernetes shows beside it.
  for (const char* name : {"cpu", "memory"}) {
    if (MemberOrNull(MemberOrNull(resources, "limits"), name).is_string() &&
        MemberOrNull(resources, name).is_string()) {
      container["resources"]["requests"][name] = resources[name];
    }
  }
  container["securityContext"] = {{"allowPrivilegeEscalation", false}};
  return container;
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

}  // namespace

Result<Json> V1PodSpec(const Json& spec) {
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
  const Json& node_selector = MemberOrNull(spec, "nodeSelector");
  if (node_selector.is_object() && !node_selector.empty()) out["nodeSelector"] = node_selector;
  const Json& tolerations = MemberOrNull(spec, "tolerations");
  if (tolerations.is_array() && !tolerations.empty()) out["tolerations"] = tolerations;
  return out;
}

bool PodServes(const Json& body) {
  if (MemberOrNull(MemberOrNull(body, "status"), "phase") != Json("Running")) return false;
  const Json& annotations = MemberOrNull(MemberOrNull(body, "metadata"), "annotations");
  if (MemberOrNull(annotations, kDrainingAnnotation).is_string()) return false;
  const Json& spec = MemberOrNull(body, "spec");
  const Json& owner = MemberOrNull(spec, "owner");
  // rank is left out when 0
  const bool leads_a_replica = MemberOrNull(owner, "kind") == Json("Service") &&
                               (MemberOrNull(owner, "rank").is_null() || owner["rank"] == Json(0));
  const bool probed = MemberOrNull(MemberOrNull(spec, "template"), "readinessProbe").is_object();
  return !(leads_a_replica || probed) || MemberOrNull(annotations, kReadyAtAnnotation).is_string();
}

Json V1PodStatus(const Json& status, const Json& current, bool ready) {
  Json out = current.is_object() ? current : Json::object();
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
      {"name", kPodContainerName},
      {"ready", ready},
      {"restartCount",
       MemberOrNull(status, "restartCount").is_number_integer() ? status["restartCount"] : Json(0)},
      {"image", kProcessImage},
      {"imageID", ""}};
  if (MemberOrNull(status, "exitCode").is_number_integer()) {
    container["state"] = {{"terminated", {{"exitCode", status["exitCode"]}}}};
  } else if (phase == "Running") {
    container["state"] = {{"running", Json::object()}};
  } else {
    container["state"] = {{"waiting", Json::object()}};
  }
  for (const Json& existing : MemberOrNull(current, "containerStatuses")) {
    if (MemberOrNull(existing, "name") == Json(kPodContainerName) && existing.contains("image")) {
      container["image"] = existing["image"];
    }
  }
  out["containerStatuses"] = Json::array({std::move(container)});
  SetCondition(out, "Ready", ready);
  SetCondition(out, "ContainersReady", ready);
  return out;
}

Json PodOwnerReferences(const Json& owner) {
  const Json& kind = MemberOrNull(owner, "kind");
  const Json& name = MemberOrNull(owner, "name");
  const Json& uid = MemberOrNull(owner, "uid");
  if (!kind.is_string() || !name.is_string() || !uid.is_string() ||
      uid.get_ref<const std::string&>().empty()) {
    return Json();
  }
  return Json::array({{{"apiVersion", kApiVersion},
                       {"kind", kind},
                       {"name", name},
                       {"uid", uid},
                       {"controller", true}}});
}

Result<Json> ServedV1Pod(const Json& stored) {
  Json out = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  out["metadata"] = MemberOrNull(stored, "metadata");
  Json owners = PodOwnerReferences(MemberOrNull(MemberOrNull(stored, "spec"), "owner"));
  if (!owners.is_null()) out["metadata"]["ownerReferences"] = std::move(owners);
  ASSIGN_OR_RETURN(out["spec"], V1PodSpec(MemberOrNull(stored, "spec")));
  out["status"] = V1PodStatus(MemberOrNull(stored, "status"), Json(), PodServes(stored));
  return out;
}

bool IsV1PodShape(const Json& document) {
  return MemberOrNull(document, "kind") == Json("Pod") &&
         MemberOrNull(MemberOrNull(document, "spec"), "containers").is_array();
}

Result<Json> StoredPodFromV1(const Json& served, const Json& current) {
  ASSIGN_OR_RETURN(Json expected, V1PodSpec(MemberOrNull(current, "spec")));
  const Json differences = Json::diff(expected, MemberOrNull(served, "spec"));
  if (!differences.empty()) {
    std::string field = "spec";
    // The JSON pointer of the first difference, as a field path: /containers/0/env ->
    // spec.containers[0].env.
    const std::string pointer = differences[0]["path"].get<std::string>();
    const Json* in_expected = &expected;  // where the path is in the served spec, while it is
    for (size_t at = 1; at <= pointer.size();) {
      const size_t next = std::min(pointer.find('/', at), pointer.size());
      std::string part = pointer.substr(at, next - at);
      for (size_t tilde = part.find('~'); tilde != std::string::npos && tilde + 1 < part.size();
           tilde = part.find('~', tilde + 1)) {
        part.replace(tilde, 2, part[tilde + 1] == '1' ? "/" : "~");
      }
      // "-" is past a list's end: an item added.
      if (part == "-" && in_expected != nullptr && in_expected->is_array()) {
        part = std::to_string(in_expected->size());
      }
      const bool index = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
      field += index ? "[" + part + "]" : "." + part;
      if (in_expected != nullptr && in_expected->is_array() && index &&
          std::stoul(part) < in_expected->size()) {
        in_expected = &(*in_expected)[std::stoul(part)];
      } else if (in_expected != nullptr && in_expected->is_object() &&
                 in_expected->contains(part)) {
        in_expected = &(*in_expected)[part];
      } else {
        in_expected = nullptr;
      }
      at = next + 1;
    }
    return Err(InvalidArgumentError(
        field +
        ": a pod's spec does not change once it is created (in Kubernetes neither); "
        "only its labels and annotations can: delete the pod and create it again"));
  }
  const Json& metadata = MemberOrNull(served, "metadata");
  const Json owners = PodOwnerReferences(MemberOrNull(MemberOrNull(current, "spec"), "owner"));
  if (MemberOrNull(metadata, "ownerReferences") != owners &&
      !(owners.is_null() && MemberOrNull(metadata, "ownerReferences") == Json::array())) {
    return Err(InvalidArgumentError(
        "metadata.ownerReferences: a pod's controller is the Job or Service that made it "
        "(spec.owner) and does not change"));
  }
  Json out = current;
  for (const char* field :
       {"labels", "annotations", "resourceVersion", "name", "namespace", "managedFields"}) {
    if (metadata.contains(field)) {
      out["metadata"][field] = metadata[field];
    } else {
      out["metadata"].erase(field);
    }
  }
  return out;
}

}  // namespace strata::api
