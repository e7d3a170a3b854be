#include "api/jobset_form.h"

#include "api/job.h"
#include "api/source_form.h"
#include "common/json_member.h"

namespace strata::api {

using Json = nlohmann::json;

Json JobSetStatus(const Json& stored, const Json& spec) {
  const Json& native = MemberOrNull(stored, "status");
  const JobPhase phase =
      ParseJobPhase(StringMemberOr(native, "phase", JobPhaseName(JobPhase::kPending)))
          .value_or(JobPhase::kPending);
  const std::string end = StringMemberOr(native, "completionTime");
  const std::string message = StringMemberOr(native, "message");
  Json replicated = Json::array();
  for (const Json& job : MemberOrNull(spec, "replicatedJobs")) {
    const int64_t jobs = IntegerMemberOr(job, "replicas", 1);
    const int64_t running = phase == JobPhase::kRunning ? jobs : 0;
    replicated.push_back({{"name", StringMemberOr(job, "name")},
                          {"ready", running},
                          {"active", running},
                          {"succeeded", phase == JobPhase::kSucceeded ? jobs : 0},
                          {"failed", phase == JobPhase::kFailed ? jobs : 0},
                          {"suspended", 0}});
  }
  Json status = {{"replicatedJobsStatus", std::move(replicated)},
                 {"restarts", IntegerMemberOr(native, "restartCount", 0)}};
  Json conditions = Json::array();
  // The job controller names the conditions of a Job's end after its phase.
  if (phase == JobPhase::kSucceeded) {
    status["terminalState"] = "Completed";
    conditions.push_back(TrueCondition("Completed", "AllJobsCompleted", message,
                                       ConditionTime(native, JobPhaseName(phase), end)));
  }
  if (phase == JobPhase::kFailed) {
    status["terminalState"] = "Failed";
    conditions.push_back(TrueCondition("Failed", "FailedJobs", message,
                                       ConditionTime(native, JobPhaseName(phase), end)));
  }
  if (phase == JobPhase::kPending && MemberOrNull(spec, "suspend") == Json(true)) {
    conditions.push_back(TrueCondition("Suspended", "SuspendedJobs",
                                       "JobSet suspended: it waits for its queue", ""));
  }
  if (!conditions.empty()) status["conditions"] = std::move(conditions);
  return status;
}

std::vector<TableColumn> JobSetColumns() {
  return {{"TerminalState", "The final state of the JobSet: Completed or Failed."},
          {"Restarts", "Times the JobSet's group was restarted."},
          {"Completed", "True once every child Job completed."},
          {"Suspended", "Whether the JobSet is suspended (spec.suspend)."}};
}

std::vector<std::string> JobSetCells(const Json& served, TimePoint) {
  const Json& status = MemberOrNull(served, "status");
  return {StringMemberOr(status, "terminalState"),
          std::to_string(IntegerMemberOr(status, "restarts", 0)),
          TrueConditionOf(served, "Completed") != nullptr ? "True" : "",
          MemberOrNull(MemberOrNull(served, "spec"), "suspend") == Json(true) ? "true" : ""};
}

}  // namespace strata::api
