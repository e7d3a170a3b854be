#include "api/batch_v1_form.h"

#include <string>

#include "api/job.h"
#include "api/source_form.h"
#include "common/json_member.h"

namespace strata::api {
namespace {

using Json = nlohmann::json;

// The reason the job controller gives a Job whose restarts ran out: Kubernetes says
// BackoffLimitExceeded of the same end.
constexpr std::string_view kRestartsRanOut = "MaxRestartsExceeded";

}  // namespace

void DefaultBatchJobSpec(Json& spec) {
  const int64_t parallelism = IntegerMemberOr(spec, "parallelism", 1);
  spec["parallelism"] = parallelism;
  if (!spec.contains("completions")) spec["completions"] = parallelism;
  if (!spec.contains("completionMode")) spec["completionMode"] = "NonIndexed";
  if (!spec.contains("backoffLimit")) spec["backoffLimit"] = 6;
  if (!spec.contains("suspend")) spec["suspend"] = false;
}

namespace {

// Kubernetes' form of a set of completed indexes 0..count-1: "0", "0,1", "0-3".
std::string IndexRange(int64_t count) {
  if (count == 1) return "0";
  return "0" + std::string(count == 2 ? "," : "-") + std::to_string(count - 1);
}

}  // namespace

Json BatchJobStatus(const Json& stored, const Json& spec) {
  const Json& native = MemberOrNull(stored, "status");
  const int64_t replicas = IntegerMemberOr(MemberOrNull(stored, "spec"), "replicas", 1);
  const JobPhase phase =
      ParseJobPhase(StringMemberOr(native, "phase", JobPhaseName(JobPhase::kPending)))
          .value_or(JobPhase::kPending);
  const std::string start = StringMemberOr(native, "startTime");
  const std::string end = StringMemberOr(native, "completionTime");
  const std::string message = StringMemberOr(native, "message");
  Json status = Json::object();
  if (!start.empty()) status["startTime"] = start;
  const int64_t running = phase == JobPhase::kRunning ? replicas : 0;
  if (running > 0) status["active"] = running;
  status["ready"] = running;
  Json conditions = Json::array();
  // The job controller names the conditions of a Job's end after its phase.
  if (phase == JobPhase::kSucceeded) {
    status["succeeded"] = replicas;
    if (StringMemberOr(spec, "completionMode") == "Indexed") {
      status["completedIndexes"] = IndexRange(replicas);
    }
    if (!end.empty()) status["completionTime"] = end;
    conditions.push_back(TrueCondition("Complete", "CompletionsReached", message,
                                       ConditionTime(native, JobPhaseName(phase), end)));
  }
  const int64_t failed =
      IntegerMemberOr(native, "restartCount", 0) + (phase == JobPhase::kFailed ? 1 : 0);
  if (failed > 0) status["failed"] = failed;
  if (phase == JobPhase::kFailed) {
    const std::string reason = StringMemberOr(native, "reason");
    conditions.push_back(TrueCondition(
        "Failed", reason == kRestartsRanOut || reason.empty() ? "BackoffLimitExceeded" : reason,
        message, ConditionTime(native, JobPhaseName(phase), end)));
  }
  if (phase == JobPhase::kPending && MemberOrNull(spec, "suspend") == Json(true)) {
    conditions.push_back(
        TrueCondition("Suspended", "JobSuspended", "Job suspended: it waits for its queue", ""));
  }
  if (!conditions.empty()) status["conditions"] = std::move(conditions);
  return status;
}

std::vector<TableColumn> BatchJobColumns() {
  return {{"Status", "Running, Complete, Failed or Suspended."},
          {"Completions", "Pods that succeeded out of the completions the Job needs."},
          {"Duration", "How long the Job ran, or has run since it started."}};
}

std::vector<std::string> BatchJobCells(const Json& served, TimePoint now) {
  std::string status = "Running";
  for (std::string_view type : {"Failed", "Complete", "Suspended"}) {
    if (TrueConditionOf(served, type) != nullptr) {
      status = type;
      break;
    }
  }
  const Json& spec = MemberOrNull(served, "spec");
  const Json& served_status = MemberOrNull(served, "status");
  const std::string completions =
      std::to_string(IntegerMemberOr(served_status, "succeeded", 0)) + "/" +
      std::to_string(IntegerMemberOr(spec, "completions", IntegerMemberOr(spec, "parallelism", 1)));
  std::string duration;
  const std::string start = StringMemberOr(served_status, "startTime");
  if (!start.empty()) {
    const std::optional<TimePoint> end =
        ParseRfc3339(StringMemberOr(served_status, "completionTime"));
    duration = ShortAge(start, end.value_or(now));
  }
  return {status, completions, duration};
}

}  // namespace strata::api
