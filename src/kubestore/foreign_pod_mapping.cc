// Pods strata did not make, as a virtual kubelet reads and reports them (foreign_pod_mapping.h).
#include "kubestore/foreign_pod_mapping.h"

#include <map>
#include <string>

#include "api/annotations.h"
#include "api/decode_common.h"
#include "api/encode.h"
#include "api/field_reader.h"
#include "api/kube_common.h"
#include "api/manifest.h"
#include "api/object.h"
#include "api/pod.h"
#include "api/pod_contract.h"
#include "api/pod_v1_form.h"
#include "common/clock.h"
#include "common/json_member.h"
#include "kubestore/kind_mapping.h"

namespace strata::kubestore {
namespace {

std::string StringOr(const Json& object, const char* name, std::string fallback = "") {
  const Json& value = MemberOrNull(object, name);
  return value.is_string() ? value.get<std::string>() : fallback;
}

// `text` (RFC 3339, to the microsecond or not) as Kubernetes keeps times: to the second. Null
// when it does not parse.
Json KubeTime(const std::string* text) {
  if (text == nullptr) return Json();
  std::optional<TimePoint> parsed = ParseRfc3339(*text);
  return parsed ? Json(FormatRfc3339(*parsed)) : Json();
}

// The one container's fields as strata reads them, with what the pod cannot run said on `pod`.
// Resources other than cpu, memory and GPUs (ephemeral-storage...) mean nothing to local
// processes and are left out of the limits, not refused: the pod was admitted by its cluster.
void ReadContainer(const Json& spec, api::Pod& pod) {
  auto cannot_run = [&pod](const std::string& why) {
    pod.metadata.annotations.emplace(api::kCannotRunAnnotation, why);
    // A strata pod names a program; this one is never started (the agent fails the pod first),
    // and would fail harmlessly if it were.
    pod.spec.template_.command = {"false"};
  };
  const Json& containers = MemberOrNull(spec, "containers");
  if (!containers.is_array() || containers.empty()) {
    cannot_run("spec.containers: the pod has no container");
    return;
  }
  const Json& container = containers[0];
  const std::string name = StringOr(container, "name", "main");
  pod.metadata.annotations[api::kForeignPodAnnotation] = name;
  if (containers.size() > 1) {
    std::string names;
    for (const Json& each : containers)
      names += (names.empty() ? "" : ", ") + StringOr(each, "name");
    cannot_run("spec.containers: " + std::to_string(containers.size()) + " containers (" + names +
               "): strata's virtual kubelet runs pods as local processes, one container per pod");
    return;
  }
  if (MemberOrNull(spec, "initContainers").is_array() && !spec["initContainers"].empty()) {
    cannot_run(
        "spec.initContainers: strata's virtual kubelet runs one container per pod and no "
        "init containers");
    return;
  }
  const std::string image = StringOr(container, "image");
  if (!MemberOrNull(container, "command").is_array() || container["command"].empty()) {
    cannot_run("container \"" + name + "\" has no command: strata's virtual kubelet runs " +
               "containers as local processes and cannot run the entrypoint of image \"" + image +
               "\"; give the container a command");
    return;
  }
  // What the decoder reads, less what a cluster admits that processes cannot use.
  Json readable = spec;
  readable.erase("nodeSelector");
  Json& resources = readable["containers"][0]["resources"];
  // A share of a GPU (HAMi's nvidia.com/gpumem, gpucores...) is said on the pod: the agent
  // refuses it at admission rather than give a whole GPU for it.
  std::map<std::string, std::string> shares;
  for (const char* map : {"limits", "requests"}) {
    if (!MemberOrNull(resources, map).is_object()) continue;
    Json kept = Json::object();
    for (const auto& [resource, amount] : resources[map].items()) {
      if (resource == "cpu" || resource == "memory" || resource == api::kGpuResourceName) {
        kept[resource] = amount;
      } else if (resource.starts_with("nvidia.com/")) {
        shares.emplace(resource, amount.is_string() ? amount.get<std::string>() : amount.dump());
      }
    }
    resources[map] = std::move(kept);
  }
  if (!shares.empty()) {
    std::string described;
    for (const auto& [resource, amount] : shares) {
      described += (described.empty() ? "" : ", ") + resource + "=" + amount;
    }
    pod.metadata.annotations[api::kGpuShareRequestAnnotation] = described;
  }
  // Its variables are the user's alone: strata sets none of its own (torchrun's, STRATA_*) in
  // a pod it did not make, so none is reserved (an operator's MASTER_ADDR, RANK... pass).
  Json env_holder = {{"env", readable["containers"][0].value("env", Json::array())}};
  readable["containers"][0].erase("env");
  FieldErrors errors;
  api::KubeContainer read =
      api::FromSingleContainer(api::FieldView(readable, "spec"), api::WorkloadClass::kTraining,
                               errors, /*command_required=*/true, /*node_selector_honoured=*/true);
  read.process.env =
      api::DecodeEnv(api::FieldView(env_holder, "spec.containers[0]"), "env", errors);
  if (!errors.empty()) {
    std::string why;
    for (const FieldError& error : errors.list())
      why += (why.empty() ? "" : "; ") + error.ToString();
    cannot_run("container \"" + name + "\": " + why);
    return;
  }
  pod.spec.template_ = std::move(read.process);
  pod.spec.resources = std::move(read.resources);
  std::string ignored;
  if (!image.empty() && image != api::kProcessImage) {
    ignored = "image \"" + image + "\" ignored: the container's command runs as a local process";
  }
  for (const FieldError& warning : errors.warnings()) {
    ignored += (ignored.empty() ? "" : "; ") + warning.ToString();
  }
  if (!ignored.empty()) pod.metadata.annotations[api::kIgnoredFieldsAnnotation] = ignored;
}

// The v1 condition `type` at `status`, with `at` as its transition time when it changes.
void PutCondition(Json& conditions, const std::string& type, bool value, const Json& at) {
  const char* text = value ? "True" : "False";
  for (Json& condition : conditions) {
    if (MemberOrNull(condition, "type") != Json(type)) continue;
    if (condition.value("status", "") != text) {
      condition = {{"type", type}, {"status", text}, {"lastTransitionTime", at}};
    }
    return;
  }
  conditions.push_back({{"type", type}, {"status", text}, {"lastTransitionTime", at}});
}

}  // namespace

bool IsForeignPod(const Json& object) {
  const Json& labels = MemberOrNull(MemberOrNull(object, "metadata"), "labels");
  return MemberOrNull(labels, api::kManagedByLabel) != Json(api::kManagedByStrata);
}

Result<Json> ForeignPodFromKube(const Json& object) {
  const Json& spec = MemberOrNull(object, "spec");
  const Json& status = MemberOrNull(object, "status");
  api::Pod pod;
  pod.spec.node_name = StringOr(spec, "nodeName");
  pod.spec.restart_policy = StringOr(spec, "restartPolicy", "Always");
  ReadContainer(spec, pod);
  // What the agent reported before, read back.
  std::optional<api::PodPhase> phase = api::ParsePodPhase(StringOr(status, "phase", "Pending"));
  pod.status.phase = phase.value_or(api::PodPhase::kPending);
  pod.status.reason = StringOr(status, "reason");
  pod.status.message = StringOr(status, "message");
  pod.status.pod_ip = StringOr(status, "podIP");
  auto& annotations = pod.metadata.annotations;
  if (MemberOrNull(status, "startTime").is_string()) {
    annotations[api::kStartedAtAnnotation] = status["startTime"].get<std::string>();
  }
  for (const Json& condition : MemberOrNull(status, "conditions")) {
    if (MemberOrNull(condition, "type") == Json("Ready") &&
        MemberOrNull(condition, "status") == Json("True") &&
        MemberOrNull(condition, "lastTransitionTime").is_string()) {
      annotations[api::kReadyAtAnnotation] = condition["lastTransitionTime"].get<std::string>();
    }
  }
  const Json& container_statuses = MemberOrNull(status, "containerStatuses");
  if (container_statuses.is_array() && !container_statuses.empty()) {
    const Json& container = container_statuses[0];
    if (MemberOrNull(container, "restartCount").is_number_integer()) {
      pod.status.restart_count = container["restartCount"].get<int64_t>();
    }
    const Json& terminated = MemberOrNull(MemberOrNull(container, "state"), "terminated");
    if (MemberOrNull(terminated, "exitCode").is_number_integer()) {
      pod.status.exit_code = terminated["exitCode"].get<int64_t>();
    }
    if (MemberOrNull(terminated, "finishedAt").is_string()) {
      annotations[api::kFinishedAtAnnotation] = terminated["finishedAt"].get<std::string>();
    }
    // The GPUs the agent gave the pod: a restarted agent gives them to no other pod.
    for (const Json& allocated : MemberOrNull(container, "allocatedResourcesStatus")) {
      if (MemberOrNull(allocated, "name") == Json(api::kGpuResourceName) &&
          MemberOrNull(allocated, "resources").is_array()) {
        Json devices = Json::array();
        for (const Json& device : allocated["resources"]) {
          if (!MemberOrNull(device, "resourceID").is_string()) continue;
          devices.push_back({{"resourceID", device["resourceID"]},
                             {"health", StringOr(device, "health", "Unknown")}});
        }
        annotations[api::kAllocatedGpusAnnotation] = devices.dump();
      }
    }
  }
  const Json& metadata_in = MemberOrNull(object, "metadata");
  if (MemberOrNull(metadata_in, "deletionTimestamp").is_string()) {
    const Json& grace = MemberOrNull(metadata_in, "deletionGracePeriodSeconds");
    annotations[api::kForeignDeletingAnnotation] =
        std::to_string(grace.is_number_integer() ? grace.get<int64_t>() : 0);
    annotations[api::kStopRequestedAnnotation] = "Deleted";
    annotations[api::kStopMessageAnnotation] = "the pod was deleted";
  }
  auto encoded = [&metadata_in](const api::Pod& value) {
    Json body = api::EncodeObject(api::Object(value));
    Json metadata = StrataMetadata(metadata_in);
    // strata's annotations on a pod it did not make are the agent's alone (what it read back).
    if (metadata.contains("annotations")) {
      Json& kept = metadata["annotations"];
      for (auto it = kept.begin(); it != kept.end();) {
        it = it.key().starts_with("strata.dev/") ? kept.erase(it) : std::next(it);
      }
    }
    for (const auto& [key, text] : value.metadata.annotations) metadata["annotations"][key] = text;
    body["metadata"] = std::move(metadata);
    return body;
  };
  Json body = encoded(pod);
  // A pod strata's model cannot hold would be left out of every cache, silently pending: it
  // cannot run here, and says why.
  if (Result<api::Object> decoded = api::DecodeObject(body); !decoded) {
    api::Pod unrunnable;
    unrunnable.spec.node_name = pod.spec.node_name;
    unrunnable.spec.template_.command = {"false"};  // never started
    unrunnable.status = pod.status;
    unrunnable.metadata.annotations = pod.metadata.annotations;
    unrunnable.metadata.annotations.erase(api::kIgnoredFieldsAnnotation);
    unrunnable.metadata.annotations[api::kCannotRunAnnotation] =
        "strata's virtual kubelet cannot run this pod as a local process: " +
        decoded.error().message();
    body = encoded(unrunnable);
  }
  return body;
}

Result<Json> ForeignPodToKube(const store::Object& object, const Json& current) {
  Json out = current;
  if (out.contains("metadata")) out["metadata"].erase("managedFields");
  if (object.resource_version != 0) {
    out["metadata"]["resourceVersion"] = std::to_string(object.resource_version);
  }
  ASSIGN_OR_RETURN(api::Object decoded, api::DecodeObject(object.body));
  const api::Pod* pod = decoded.As<api::Pod>();
  if (pod == nullptr) return Err(InvalidArgumentError(object.key.Describe() + ": not a Pod"));
  const auto annotation = [pod](const char* key) { return api::PodAnnotation(*pod, key); };
  Json status = MemberOrNull(current, "status").is_object() ? current["status"] : Json::object();
  const std::string phase(api::PodPhaseName(pod->status.phase));
  status["phase"] = phase;
  for (const auto& [name, value] :
       {std::pair{"reason", &pod->status.reason}, std::pair{"message", &pod->status.message}}) {
    if (value->empty()) {
      status.erase(name);
    } else {
      status[name] = *value;
    }
  }
  if (!pod->status.pod_ip.empty()) {
    status["podIP"] = pod->status.pod_ip;
    status["podIPs"] = Json::array({{{"ip", pod->status.pod_ip}}});
  }
  const Json started_at = KubeTime(annotation(api::kStartedAtAnnotation));
  const Json finished_at = KubeTime(annotation(api::kFinishedAtAnnotation));
  if (!started_at.is_null()) status["startTime"] = started_at;

  const bool started = !started_at.is_null();
  // Running with a reason: its processes ended and restart after a back-off (CrashLoopBackOff).
  const bool backing_off =
      pod->status.phase == api::PodPhase::kRunning && !pod->status.reason.empty();
  const bool running = pod->status.phase == api::PodPhase::kRunning && !backing_off;
  const bool ready = api::PodServes(object.body) && !backing_off;
  const Json ready_at = KubeTime(annotation(api::kReadyAtAnnotation));
  const Json changed_at = ready                    ? (ready_at.is_null() ? started_at : ready_at)
                          : !finished_at.is_null() ? finished_at
                                                   : started_at;
  Json& conditions = status["conditions"];
  if (!conditions.is_array()) conditions = Json::array();
  PutCondition(conditions, "PodReadyToStartContainers", started, started_at);
  PutCondition(conditions, "Initialized", true, started_at);
  PutCondition(conditions, "ContainersReady", ready, changed_at);
  PutCondition(conditions, "Ready", ready, changed_at);

  const std::string* name = annotation(api::kForeignPodAnnotation);
  Json container = {{"name", name != nullptr ? *name : std::string(api::kPodContainerName)},
                    {"image", ""},
                    {"imageID", ""},
                    {"ready", ready},
                    {"started", running},
                    {"restartCount", pod->status.restart_count}};
  for (const Json& spec_container : MemberOrNull(MemberOrNull(current, "spec"), "containers")) {
    if (MemberOrNull(spec_container, "name") == container["name"]) {
      container["image"] = StringOr(spec_container, "image");
    }
  }
  if (const std::string* gpus = annotation(api::kAllocatedGpusAnnotation)) {
    // As the kubelet reports a device plugin's devices (v1 ResourceStatus).
    Json devices = Json::parse(*gpus, nullptr, /*allow_exceptions=*/false);
    if (devices.is_array()) {
      container["allocatedResourcesStatus"] =
          Json::array({{{"name", api::kGpuResourceName}, {"resources", std::move(devices)}}});
    }
  }
  if (pod->status.exit_code) {
    Json terminated = {{"exitCode", *pod->status.exit_code},
                       {"reason", pod->status.reason.empty() ? "Error" : pod->status.reason}};
    if (!pod->status.message.empty()) terminated["message"] = pod->status.message;
    if (!started_at.is_null()) terminated["startedAt"] = started_at;
    if (!finished_at.is_null()) terminated["finishedAt"] = finished_at;
    container["state"] = {{"terminated", std::move(terminated)}};
  } else if (running) {
    Json running_state = Json::object();
    if (!started_at.is_null()) running_state["startedAt"] = started_at;
    container["state"] = {{"running", std::move(running_state)}};
  } else {
    // Not started yet (the environment's references wait), failed before it could start, or
    // waiting to start again.
    Json waiting = {
        {"reason", pod->status.reason.empty() ? "ContainerCreating" : pod->status.reason}};
    if (!pod->status.message.empty()) waiting["message"] = pod->status.message;
    container["state"] = {{"waiting", std::move(waiting)}};
  }
  status["containerStatuses"] = Json::array({std::move(container)});
  out["status"] = std::move(status);
  return out;
}

}  // namespace strata::kubestore
