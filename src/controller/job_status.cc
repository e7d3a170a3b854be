#include "controller/job_status.h"

#include "controller/status_json.h"

namespace strata::controller {

using status_json::Integer;
using status_json::PutText;
using status_json::Text;

bool JobStatus::SetCondition(std::string_view type, std::string_view status,
                             std::string_view reason, std::string_view message, TimePoint now) {
  JobCondition wanted{std::string(type), std::string(status), std::string(reason),
                      std::string(message), FormatRfc3339(now)};
  for (JobCondition& condition : conditions) {
    if (condition.type != type) continue;
    if (condition.status == status) wanted.last_transition_time = condition.last_transition_time;
    if (condition == wanted) return false;
    condition = std::move(wanted);
    return true;
  }
  conditions.push_back(std::move(wanted));
  return true;
}

const JobCondition* JobStatus::FindCondition(std::string_view type) const {
  for (const JobCondition& condition : conditions) {
    if (condition.type == type) return &condition;
  }
  return nullptr;
}

JobStatus ReadJobStatus(const nlohmann::json& body) {
  JobStatus status;
  if (!body.is_object()) return status;
  auto it = body.find("status");
  if (it == body.end() || !it->is_object()) return status;
  const nlohmann::json& s = *it;
  if (std::string phase = Text(s, "phase"); !phase.empty()) status.phase = phase;
  status.restart_count = Integer(s, "restartCount");
  status.preemption_count = Integer(s, "preemptionCount");
  status.reason = Text(s, "reason");
  status.message = Text(s, "message");
  status.start_time = Text(s, "startTime");
  status.completion_time = Text(s, "completionTime");
  status.last_checkpoint_time = Text(s, "lastCheckpointTime");
  auto conditions = s.find("conditions");
  if (conditions != s.end() && conditions->is_array()) {
    for (const nlohmann::json& c : *conditions) {
      if (!c.is_object()) continue;
      status.conditions.push_back({Text(c, "type"), Text(c, "status"), Text(c, "reason"),
                                   Text(c, "message"), Text(c, "lastTransitionTime")});
    }
  }
  return status;
}

void WriteJobStatus(const JobStatus& status, nlohmann::json& body) {
  nlohmann::json s = {{"phase", status.phase}};
  if (status.restart_count != 0) s["restartCount"] = status.restart_count;
  if (status.preemption_count != 0) s["preemptionCount"] = status.preemption_count;
  PutText(s, "reason", status.reason);
  PutText(s, "message", status.message);
  PutText(s, "startTime", status.start_time);
  PutText(s, "completionTime", status.completion_time);
  PutText(s, "lastCheckpointTime", status.last_checkpoint_time);
  if (!status.conditions.empty()) {
    nlohmann::json conditions = nlohmann::json::array();
    for (const JobCondition& c : status.conditions) {
      nlohmann::json item = {{"type", c.type}, {"status", c.status}};
      PutText(item, "reason", c.reason);
      PutText(item, "message", c.message);
      PutText(item, "lastTransitionTime", c.last_transition_time);
      conditions.push_back(std::move(item));
    }
    s["conditions"] = std::move(conditions);
  }
  body["status"] = std::move(s);
}

}  // namespace strata::controller
