#include "api/kueue_form.h"

#include <string_view>

#include "api/source_form.h"
#include "common/json_member.h"

namespace strata::api {
namespace {

using Json = nlohmann::json;

// Sets `key` to `value` where `object` has none.
void DefaultMember(Json& object, std::string_view key, Json value) {
  if (!object.contains(key)) object[std::string(key)] = std::move(value);
}

// A quota resource as Kueue names it, from strata's name ("gpu"), or empty for one Kueue has
// no name for (gpuMemory).
std::string KueueResourceName(std::string_view native) {
  if (native == "gpu") return "nvidia.com/gpu";
  if (native == "cpu" || native == "memory") return std::string(native);
  return "";
}

// The native usage entry of `resource` (Kueue's name) in `flavor` of the Queue's status.
const Json* NativeUsage(const Json& native_status, const std::string& flavor,
                        const std::string& resource) {
  for (const Json& usage : MemberOrNull(native_status, "flavorsUsage")) {
    if (StringMemberOr(usage, "name") != flavor) continue;
    for (const Json& entry : MemberOrNull(usage, "resources")) {
      if (KueueResourceName(StringMemberOr(entry, "name")) == resource) return &entry;
    }
  }
  return nullptr;
}

std::string CellOf(const Json& object, std::string_view key) {
  const Json& value = MemberOrNull(object, key);
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  return value.is_string() ? value.get<std::string>() : "";
}

}  // namespace

void DefaultClusterQueueSpec(Json& spec) {
  if (spec.contains("cohort")) {
    if (!spec.contains("cohortName")) spec["cohortName"] = spec["cohort"];
    spec.erase("cohort");
  }
  DefaultMember(spec, "queueingStrategy", "BestEffortFIFO");
  DefaultMember(spec, "stopPolicy", "None");
  DefaultMember(spec, "flavorFungibility", Json::object());
  Json& fungibility = spec["flavorFungibility"];
  if (fungibility.is_object()) {
    if (MemberOrNull(fungibility, "whenCanBorrow") == "Borrow") {
      fungibility["whenCanBorrow"] = "MayStopSearch";
    }
    DefaultMember(fungibility, "whenCanBorrow", "MayStopSearch");
    DefaultMember(fungibility, "whenCanPreempt", "TryNextFlavor");
  }
  DefaultMember(spec, "preemption", Json::object());
  Json& preemption = spec["preemption"];
  if (preemption.is_object()) {
    DefaultMember(preemption, "withinClusterQueue", "Never");
    DefaultMember(preemption, "reclaimWithinCohort", "Never");
    DefaultMember(preemption, "borrowWithinCohort", Json::object());
    if (preemption["borrowWithinCohort"].is_object()) {
      DefaultMember(preemption["borrowWithinCohort"], "policy", "Never");
    }
  }
}

void ClusterQueueSpecAtVersion(Json& spec, std::string_view version) {
  if (version != "v1beta1" || !spec.contains("cohortName")) return;
  spec["cohort"] = std::move(spec["cohortName"]);
  spec.erase("cohortName");
}

Json ClusterQueueStatus(const Json& stored, const Json& spec) {
  const Json& native = MemberOrNull(stored, "status");
  // Every flavor and resource the queue gives quota in, used or not, as Kueue lists them.
  Json usage = Json::array();
  for (const Json& group : MemberOrNull(spec, "resourceGroups")) {
    for (const Json& flavor : MemberOrNull(group, "flavors")) {
      const std::string name = StringMemberOr(flavor, "name");
      Json resources = Json::array();
      for (const Json& quota : MemberOrNull(flavor, "resources")) {
        const std::string resource = StringMemberOr(quota, "name");
        const Json* used = NativeUsage(native, name, resource);
        resources.push_back(
            {{"name", resource},
             {"total", used == nullptr ? "0" : StringMemberOr(*used, "used", "0")},
             {"borrowed", used == nullptr ? "0" : StringMemberOr(*used, "borrowed", "0")}});
      }
      usage.push_back({{"name", name}, {"resources", std::move(resources)}});
    }
  }
  const int64_t admitted = IntegerMemberOr(native, "admittedWorkloads", 0);
  const std::string since = StringMemberOr(MemberOrNull(stored, "metadata"), "creationTimestamp");
  return {{"flavorsReservation", usage},
          {"flavorsUsage", usage},
          {"pendingWorkloads", IntegerMemberOr(native, "pendingWorkloads", 0)},
          {"reservingWorkloads", admitted},
          {"admittedWorkloads", admitted},
          {"conditions", Json::array({KueueActiveCondition("Can admit new workloads", since)})}};
}

std::vector<TableColumn> ClusterQueueColumns() {
  return {{"Cohort", "The cohort the queue borrows in."},
          {"Strategy", "The queueing strategy: BestEffortFIFO or StrictFIFO.", 1},
          {"Pending Workloads", "Workloads waiting for admission."},
          {"Admitted Workloads", "Admitted workloads that have not finished.", 1}};
}

std::vector<std::string> ClusterQueueCells(const Json& served, TimePoint /*now*/) {
  const Json& spec = MemberOrNull(served, "spec");
  const Json& status = MemberOrNull(served, "status");
  return {CellOf(spec, "cohortName"), CellOf(spec, "queueingStrategy"),
          CellOf(status, "pendingWorkloads"), CellOf(status, "admittedWorkloads")};
}

Json KueueResourceFlavorStatus(const Json& /*stored*/, const Json& /*spec*/) { return Json(); }

std::vector<TableColumn> KueueResourceFlavorColumns() { return {}; }

std::vector<std::string> KueueResourceFlavorCells(const Json& /*served*/, TimePoint /*now*/) {
  return {};
}

Json WorkloadPriorityClassStatus(const Json& /*stored*/, const Json& /*spec*/) { return Json(); }

std::vector<TableColumn> WorkloadPriorityClassColumns() {
  return {{"Value", "Value of workloadPriorityClass's Priority"}};
}

std::vector<std::string> WorkloadPriorityClassCells(const Json& served, TimePoint /*now*/) {
  return {CellOf(served, "value")};
}

Json CohortStatus(const Json& /*stored*/, const Json& /*spec*/) { return Json(); }

std::vector<TableColumn> CohortColumns() { return {}; }

std::vector<std::string> CohortCells(const Json& /*served*/, TimePoint /*now*/) { return {}; }

Json KueueActiveCondition(std::string_view message, const std::string& time) {
  Json condition = {
      {"type", "Active"}, {"status", "True"}, {"reason", "Ready"}, {"message", message}};
  if (!time.empty()) condition["lastTransitionTime"] = time;
  return condition;
}

}  // namespace strata::api
