#include "kubesched/pod_groups.h"

#include "common/json_member.h"

namespace strata::kubesched {
namespace {

using nlohmann::json;

Status Invalid(const json& object, const std::string& field, const std::string& what) {
  const json& metadata = MemberOrNull(object, "metadata");
  return Status(StatusCode::kInvalidArgument, "PodGroup " + StringMemberOr(metadata, "namespace") +
                                                  "/" + StringMemberOr(metadata, "name") + ": " +
                                                  field + ": " + what);
}

}  // namespace

Result<GroupPolicy> PolicyOfPodGroup(const json& object) {
  const json& spec = MemberOrNull(object, "spec");
  const json& policy = MemberOrNull(spec, "schedulingPolicy");
  const json& gang = MemberOrNull(policy, "gang");
  bool basic = MemberOrNull(policy, "basic").is_object();
  if (basic == gang.is_object()) {
    return tl::unexpected(
        Invalid(object, "spec.schedulingPolicy", "exactly one of basic and gang must be set"));
  }
  GroupPolicy out;
  out.gang = !basic;
  if (out.gang) {
    const json& min_count = MemberOrNull(gang, "minCount");
    if (!min_count.is_number_integer() || min_count.get<int64_t>() < 1) {
      return tl::unexpected(
          Invalid(object, "spec.schedulingPolicy.gang.minCount", "must be an integer >= 1"));
    }
    out.min_count = min_count.get<int64_t>();
  }
  const json& topology = MemberOrNull(MemberOrNull(spec, "schedulingConstraints"), "topology");
  if (topology.is_array() && !topology.empty()) {
    if (topology.size() > 1) {
      return tl::unexpected(Invalid(object, "spec.schedulingConstraints.topology",
                                    "at most one constraint is supported"));
    }
    out.required_topology = StringMemberOr(topology[0], "key");
    if (out.required_topology.empty()) {
      return tl::unexpected(
          Invalid(object, "spec.schedulingConstraints.topology[0].key", "must not be empty"));
    }
  }
  return out;
}

Result<GroupPolicy> PolicyOfVolcanoPodGroup(const json& object) {
  GroupPolicy out;
  const json& min_member = MemberOrNull(MemberOrNull(object, "spec"), "minMember");
  if (min_member.is_null()) return out;
  if (!min_member.is_number_integer() || min_member.get<int64_t>() < 0) {
    return tl::unexpected(Invalid(object, "spec.minMember", "must be a non-negative integer"));
  }
  out.min_count = std::max<int64_t>(1, min_member.get<int64_t>());
  return out;
}

std::optional<json> PodGroupStatusPatch(const json& object, bool scheduled,
                                        const std::string& message, TimePoint now) {
  const json& conditions = MemberOrNull(MemberOrNull(object, "status"), "conditions");
  json kept = json::array();
  std::string since = FormatRfc3339(now);
  if (conditions.is_array()) {
    for (const json& condition : conditions) {
      if (StringMemberOr(condition, "type") != kPodGroupScheduledCondition) {
        kept.push_back(condition);
        continue;
      }
      std::string status = StringMemberOr(condition, "status");
      if (status == "True") return std::nullopt;
      if (!scheduled && StringMemberOr(condition, "message") == message) return std::nullopt;
      // Still False: the transition was the one already recorded.
      if (!scheduled) since = StringMemberOr(condition, "lastTransitionTime", since);
    }
  }
  json condition = {{"type", kPodGroupScheduledCondition},
                    {"status", scheduled ? "True" : "False"},
                    {"reason", scheduled ? "Scheduled" : "Unschedulable"},
                    {"message", message},
                    {"lastTransitionTime", since}};
  if (const json& generation = MemberOrNull(MemberOrNull(object, "metadata"), "generation");
      generation.is_number_integer()) {
    condition["observedGeneration"] = generation;
  }
  kept.push_back(std::move(condition));
  return json{{"status", {{"conditions", std::move(kept)}}}};
}

}  // namespace strata::kubesched
