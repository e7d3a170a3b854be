#include "server/workload_priority.h"

#include "api/kube_common.h"
#include "common/json_member.h"

namespace strata::server {
namespace {

using Json = nlohmann::json;

bool IsWorkloadKind(const std::string& kind) {
  return kind == "Job" || kind == "Pod" || kind == "Service";
}

// The priority-class label of a stored body, empty when none.
std::string ClassLabelOf(const Json& body) {
  return StringMemberOr(MemberOrNull(MemberOrNull(body, "metadata"), "labels"),
                        api::kKueuePriorityClassLabel);
}

// The encoders leave a zero priority out; so does this, so that a write equal to the stored
// object reads as unchanged.
void SetPriority(Json& body, int64_t priority) {
  Json& spec = body["spec"];
  if (priority == 0) {
    spec.erase("priority");
  } else {
    spec["priority"] = priority;
  }
}

}  // namespace

Status GiveClassPriority(const store::Store& store, const store::Object* current,
                         const std::map<std::string, int64_t>& in_request, store::Object& write) {
  if (!IsWorkloadKind(write.key.kind)) return Status::Ok();
  const std::string name = ClassLabelOf(write.body);
  if (name.empty()) return Status::Ok();
  if (current != nullptr && ClassLabelOf(current->body) == name) {
    SetPriority(write.body, IntegerMemberOr(MemberOrNull(current->body, "spec"), "priority", 0));
    return Status::Ok();
  }
  if (auto it = in_request.find(name); it != in_request.end()) {
    SetPriority(write.body, it->second);
    return Status::Ok();
  }
  Result<store::Object> stored = store.Get({"WorkloadPriorityClass", "", name});
  if (!stored) {
    if (stored.error().code() != StatusCode::kNotFound) return stored.error();
    return InvalidArgumentError(
        "metadata.labels[" + std::string(api::kKueuePriorityClassLabel) +
        "]: WorkloadPriorityClass \"" + name +
        "\" does not exist; apply it first (Kueue would keep the workload unadmitted until it "
        "exists; strata refuses it rather than admit it at another priority)");
  }
  SetPriority(write.body, IntegerMemberOr(MemberOrNull(stored->body, "spec"), "value", 0));
  return Status::Ok();
}

}  // namespace strata::server
