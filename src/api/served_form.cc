#include "api/served_form.h"

#include <string>

#include "api/events_v1_form.h"
#include "api/media_ranges.h"
#include "api/object_meta.h"
#include "api/pod_v1_form.h"
#include "api/resource_catalog.h"
#include "api/source_form.h"
#include "common/json_member.h"

namespace strata::api {
namespace {

constexpr std::string_view kGpuResource = "nvidia.com/gpu";

// The served type of a core-group native kind named `kind`, or nullptr.
const ResourceType* CoreType(std::string_view kind) {
  const ResourceType* type = FindResourceTypeByKind(kind);
  return type != nullptr && type->group.empty() ? type : nullptr;
}

// A node's whole GPUs as the extended resource Kubernetes' device plugin reports, beside its cpu
// and memory (a GPU in MIG mode is not one). Allocatable is the same: strata reserves nothing on
// a node.
void AddExtendedResources(nlohmann::json& node) {
  nlohmann::json& status = node["status"];
  if (!status.is_object()) return;
  nlohmann::json capacity = MemberOrNull(status, "capacity");
  if (!capacity.is_object()) capacity = nlohmann::json::object();
  int64_t gpus = 0;
  for (const nlohmann::json& gpu : MemberOrNull(status, "gpus")) {
    if (MemberOrNull(gpu, "migEnabled") != nlohmann::json(true)) ++gpus;
  }
  capacity[std::string(kGpuResource)] = std::to_string(gpus);
  status["capacity"] = capacity;
  status["allocatable"] = std::move(capacity);
}

}  // namespace

ServedForm ServedFormWanted(std::string_view accept) {
  for (const MediaRange& range : ParseAcceptHeader(accept)) {
    auto group = range.parameters.find("g");
    if (group != range.parameters.end() && group->second == kStrataGroup) {
      return ServedForm::kStrata;
    }
  }
  return ServedForm::kKubernetes;
}

ServedForm KubernetesFormAt(const ResourceType& type) {
  if (&type == &EventsV1Type()) return ServedForm::kEventsV1;
  if (IsSourceServedType(type)) return ServedForm::kSource;
  return ServedForm::kKubernetes;
}

void ToServedForm(nlohmann::json& body, ServedForm form, const ResourceType* at) {
  if (!body.is_object()) return;
  if (form == ServedForm::kSource) {
    body = ServedSourceForm(body, at);
    return;
  }
  const ResourceType* type = CoreType(StringMemberOr(body, "kind"));
  if (type == nullptr || StringMemberOr(body, "apiVersion") != kApiVersion) return;
  if (type->kind == "Event" && form == ServedForm::kEventsV1) {
    body = ServedEventsV1(body);
    return;
  }
  if (type->kind == "Pod" && form == ServedForm::kKubernetes) {
    if (Result<nlohmann::json> pod = ServedV1Pod(body)) {
      body = std::move(*pod);
      return;
    }
  }
  body["apiVersion"] = type->GroupVersion();
  if (type->kind == "Node") AddExtendedResources(body);
}

bool IsServedCoreForm(const nlohmann::json& document) {
  const std::string kind = StringMemberOr(document, "kind");
  const ResourceType* type = CoreType(kind);
  if (type == nullptr || StringMemberOr(document, "apiVersion") != type->GroupVersion()) {
    return false;
  }
  return kind != "Pod" || MemberOrNull(document, "spec").contains("template");
}

}  // namespace strata::api
