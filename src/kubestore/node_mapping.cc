// strata's Nodes as v1 Nodes (see kind_mapping.h).
#include <string>

#include "api/annotations.h"
#include "api/object_meta.h"
#include "common/json_member.h"
#include "common/quantity.h"
#include "kube/resource.h"
#include "kubestore/kind_mapping.h"

namespace strata::kubestore {
namespace {

constexpr char kGpuResource[] = "nvidia.com/gpu";

// Taints that Kubernetes' node lifecycle controller sets and clears (not-ready, unreachable,
// ...): the store neither shows them nor writes over them.
bool IsKubernetesTaint(const Json& taint) {
  return MemberOrNull(taint, "key").is_string() &&
         taint["key"].get<std::string>().starts_with("node.kubernetes.io/");
}

// cpu, memory and the GPU count as v1 resources, over `base` (a server's other resources, such
// as pods, are kept).
Json Resources(const Json& status, Json base) {
  if (!base.is_object()) base = Json::object();
  const Json& capacity = MemberOrNull(status, "capacity");
  for (const char* name : {"cpu", "memory"}) {
    if (MemberOrNull(capacity, name).is_string()) base[name] = capacity[name];
  }
  const Json& gpus = MemberOrNull(status, "gpus");
  if (gpus.is_array() && !gpus.empty()) base[kGpuResource] = std::to_string(gpus.size());
  return base;
}

// The kubelet endpoint "HOST:PORT" (IPv6 in brackets) of a node's annotations as the API server
// reads it: status.addresses' InternalIP and daemonEndpoints' port. False when absent or
// malformed (the status keeps what the server had).
bool SetKubeletEndpoint(const Json& annotations, Json& kube_status) {
  const Json& endpoint = MemberOrNull(annotations, api::kKubeletEndpointAnnotation);
  if (!endpoint.is_string()) return false;
  const std::string text = endpoint.get<std::string>();
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = 0;
  for (char c : text.substr(colon + 1)) {
    if (c < '0' || c > '9' || port > 65535) return false;
    port = port * 10 + (c - '0');
  }
  if (port <= 0 || port > 65535) return false;
  kube_status["addresses"] = Json::array({{{"type", "InternalIP"}, {"address", host}}});
  kube_status["daemonEndpoints"] = {{"kubeletEndpoint", {{"Port", port}}}};
  return true;
}

Result<Json> NodeToKube(const store::Object& object, const Json* current) {
  const Json& spec = MemberOrNull(object.body, "spec");
  const Json& status = MemberOrNull(object.body, "status");
  Json out = {{"apiVersion", "v1"}, {"kind", "Node"}};
  out["metadata"] = KubeMetadata(object, current, /*namespaced=*/false, /*keep_foreign=*/true);
  const Json& gpus = MemberOrNull(status, "gpus");
  if (gpus.is_array() && !gpus.empty()) {
    out["metadata"]["annotations"][api::kNodeGpusAnnotation] = gpus.dump();
  }
  Json kube_spec = current != nullptr ? MemberOrNull(*current, "spec") : Json::object();
  if (!kube_spec.is_object()) kube_spec = Json::object();
  // strata's taints, then those Kubernetes' node lifecycle put there (kept, never strata's).
  Json taints = MemberOrNull(spec, "taints").is_array() ? spec["taints"] : Json::array();
  for (const Json& taint : MemberOrNull(kube_spec, "taints")) {
    if (IsKubernetesTaint(taint)) taints.push_back(taint);
  }
  if (taints.empty()) {
    kube_spec.erase("taints");
  } else {
    kube_spec["taints"] = std::move(taints);
  }
  if (MemberOrNull(spec, "unschedulable") == true) {
    kube_spec["unschedulable"] = true;
  } else {
    kube_spec.erase("unschedulable");
  }
  out["spec"] = std::move(kube_spec);
  Json kube_status = current != nullptr ? MemberOrNull(*current, "status") : Json::object();
  if (!kube_status.is_object()) kube_status = Json::object();
  kube_status["capacity"] = Resources(status, MemberOrNull(kube_status, "capacity"));
  kube_status["allocatable"] = Resources(status, MemberOrNull(kube_status, "allocatable"));
  const Json& conditions = MemberOrNull(status, "conditions");
  if (conditions.is_array() && !conditions.empty()) kube_status["conditions"] = conditions;
  SetKubeletEndpoint(MemberOrNull(MemberOrNull(object.body, "metadata"), "annotations"),
                     kube_status);
  out["status"] = std::move(kube_status);
  return out;
}

// The GPUs of a node strata did not register: its allocatable nvidia.com/gpu, described by GPU
// Feature Discovery's labels.
Result<Json> DiscoveredGpus(const Json& node) {
  const Json& allocatable = MemberOrNull(MemberOrNull(node, "status"), "allocatable");
  if (!MemberOrNull(allocatable, kGpuResource).is_string()) return Json::array();
  ASSIGN_OR_RETURN(Quantity count, Quantity::Parse(allocatable[kGpuResource].get<std::string>()));
  const Json& labels = MemberOrNull(MemberOrNull(node, "metadata"), "labels");
  Json gpu = Json::object();
  if (MemberOrNull(labels, api::kGpuProductLabel).is_string())
    gpu["model"] = labels[api::kGpuProductLabel];
  if (MemberOrNull(labels, api::kGpuMemoryLabel).is_string()) {
    ASSIGN_OR_RETURN(Quantity mib,
                     Quantity::Parse(labels[api::kGpuMemoryLabel].get<std::string>()));
    gpu["memory"] = std::to_string(mib.Units()) + "Mi";
  }
  Json gpus = Json::array();
  for (int64_t i = 0; i < count.Units(); ++i) {
    gpu["index"] = i;
    gpus.push_back(gpu);
  }
  return gpus;
}

Result<Json> NodeFromKube(const Json& object) {
  const Json& metadata = MemberOrNull(object, "metadata");
  const Json& kube_spec = MemberOrNull(object, "spec");
  const Json& kube_status = MemberOrNull(object, "status");
  Json spec = Json::object();
  if (kube_spec.contains("taints") && kube_spec["taints"].is_array()) {
    Json taints = Json::array();
    for (const Json& taint : kube_spec["taints"]) {
      if (!IsKubernetesTaint(taint))
        taints.push_back(NonEmptyStrings(taint, {"key", "value", "effect"}));
    }
    if (!taints.empty()) spec["taints"] = std::move(taints);
  }
  if (MemberOrNull(kube_spec, "unschedulable") == true) spec["unschedulable"] = true;
  Json status = Json::object();
  Json capacity = Json::object();
  for (const char* name : {"cpu", "memory"}) {
    const Json& value = MemberOrNull(MemberOrNull(kube_status, "capacity"), name);
    if (value.is_string()) capacity[name] = value;
  }
  if (!capacity.empty()) status["capacity"] = std::move(capacity);
  const Json& recorded =
      MemberOrNull(MemberOrNull(metadata, "annotations"), api::kNodeGpusAnnotation);
  Json gpus;
  if (recorded.is_string()) {
    gpus = Json::parse(recorded.get<std::string>(), nullptr, /*allow_exceptions=*/false);
    if (!gpus.is_array()) {
      return Err(InvalidArgumentError(std::string("metadata.annotations[") +
                                      api::kNodeGpusAnnotation + "]: not a JSON array"));
    }
  } else {
    ASSIGN_OR_RETURN(gpus, DiscoveredGpus(object));
  }
  if (!gpus.empty()) status["gpus"] = std::move(gpus);
  if (kube_status.contains("conditions") && kube_status["conditions"].is_array()) {
    Json conditions = Json::array();
    for (const Json& condition : kube_status["conditions"]) {
      conditions.push_back(NonEmptyStrings(condition, {"type", "status", "reason", "message",
                                                       "lastHeartbeatTime", "lastTransitionTime"}));
    }
    if (!conditions.empty()) status["conditions"] = std::move(conditions);
  }
  Json out = {{"apiVersion", api::kApiVersion},
              {"kind", "Node"},
              {"metadata", StrataMetadata(metadata, {api::kNodeGpusAnnotation})}};
  if (!spec.empty()) out["spec"] = std::move(spec);
  out["status"] = std::move(status);
  return out;
}

}  // namespace

KindMapping NodeMapping() {
  KindMapping mapping;
  mapping.kind = "Node";
  mapping.resource = kube::resources::kNodes;
  mapping.namespaced = false;
  mapping.status_subresource = true;
  mapping.to_kube = NodeToKube;
  mapping.from_kube = NodeFromKube;
  return mapping;
}

}  // namespace strata::kubestore
