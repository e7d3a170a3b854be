#include "api/events_v1_form.h"

#include <string>

#include "common/json_member.h"

namespace strata::api {
namespace {

using nlohmann::json;

// A MicroTime from an RFC 3339 time with whole seconds ("2026-01-01T00:00:00Z" becomes
// "2026-01-01T00:00:00.000000Z"), as events.k8s.io writes eventTime; other text is kept.
std::string MicroTime(std::string time) {
  if (time.size() == 20 && time.back() == 'Z') time.insert(19, ".000000");
  return time;
}

}  // namespace

nlohmann::json ServedEventsV1(const nlohmann::json& stored) {
  if (!stored.is_object() || StringMemberOr(stored, "kind") != "Event") return stored;
  json out = {{"apiVersion", kEventsV1ApiVersion},
              {"kind", "Event"},
              {"metadata", MemberOrNull(stored, "metadata")}};
  const json& involved = MemberOrNull(stored, "involvedObject");
  if (!involved.is_null()) out["regarding"] = involved;
  out["type"] = StringMemberOr(stored, "type", "Normal");
  for (const auto& [from, to] : {std::pair{"reason", "reason"}, std::pair{"message", "note"}}) {
    const std::string value = StringMemberOr(stored, from);
    if (!value.empty()) out[to] = value;
  }
  const std::string first = StringMemberOr(stored, "firstTimestamp");
  const std::string last = StringMemberOr(stored, "lastTimestamp", first);
  const std::string created = StringMemberOr(MemberOrNull(stored, "metadata"), "creationTimestamp");
  out["eventTime"] = MicroTime(!last.empty() ? last : created);
  out["reportingController"] = kEventReportingController;
  out["reportingInstance"] = kEventReportingController;
  const json& count = MemberOrNull(stored, "count");
  if (count.is_number_integer()) {
    out["deprecatedCount"] = count;
    if (count.get<int64_t>() > 1) {
      out["series"] = {{"count", count}, {"lastObservedTime", out["eventTime"]}};
    }
  }
  if (!first.empty()) out["deprecatedFirstTimestamp"] = first;
  if (!last.empty()) out["deprecatedLastTimestamp"] = last;
  return out;
}

}  // namespace strata::api
