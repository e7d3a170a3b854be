#include "api/batch_v1_form.h"

#include <string>

#include "api/job.h"
#include "api/object_meta.h"
#include "api/object_table.h"
#include "common/json_member.h"

namespace strata::api {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kBatchJobKind = "Job";
// The reason the job controller gives a Job whose restarts ran out: Kubernetes says
// BackoffLimitExceeded of the same end.
constexpr std::string_view kRestartsRanOut = "MaxRestartsExceeded";

// The kept source of `stored`, or null when it has none that reads as a batch/v1 Job's.
Json SourceOf(const Json& stored) {
  if (StringMemberOr(stored, "kind") != kBatchJobKind ||
      StringMemberOr(stored, "apiVersion") != kApiVersion) {
    return Json();
  }
  const std::string text = StringMemberOr(
      MemberOrNull(MemberOrNull(stored, "metadata"), "annotations"), kSourceAnnotation);
  if (text.empty()) return Json();
  Json source = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (StringMemberOr(source, "apiVersion") != kBatchV1ApiVersion ||
      StringMemberOr(source, "kind") != kBatchJobKind ||
      !MemberOrNull(source, "spec").is_object()) {
    return Json();
  }
  return source;
}

int64_t IntegerOr(const Json& object, std::string_view key, int64_t fallback) {
  const Json& value = MemberOrNull(object, key);
  return value.is_number_integer() ? value.get<int64_t>() : fallback;
}

// Kubernetes' defaults of a JobSpec, where the document left them out.
void DefaultSpec(Json& spec) {
  const int64_t parallelism = IntegerOr(spec, "parallelism", 1);
  spec["parallelism"] = parallelism;
  if (!spec.contains("completions")) spec["completions"] = parallelism;
  if (!spec.contains("completionMode")) spec["completionMode"] = "NonIndexed";
  if (!spec.contains("backoffLimit")) spec["backoffLimit"] = 6;
  if (!spec.contains("suspend")) spec["suspend"] = false;
}

// Kubernetes' form of a set of completed indexes 0..count-1: "0", "0,1", "0-3".
std::string IndexRange(int64_t count) {
  if (count == 1) return "0";
  return "0" + std::string(count == 2 ? "," : "-") + std::to_string(count - 1);
}

Json Condition(std::string_view type, std::string_view reason, std::string_view message,
               const std::string& time) {
  Json condition = {{"type", type}, {"status", "True"}, {"reason", reason}};
  if (!message.empty()) condition["message"] = message;
  if (!time.empty()) {
    condition["lastProbeTime"] = time;
    condition["lastTransitionTime"] = time;
  }
  return condition;
}

// The time of the native condition `type`, else `fallback`. The job controller names the
// conditions of a Job's end after its phase (Succeeded, Failed).
std::string ConditionTime(const Json& native_status, std::string_view type,
                          const std::string& fallback) {
  for (const Json& condition : MemberOrNull(native_status, "conditions")) {
    if (StringMemberOr(condition, "type") == type) {
      return StringMemberOr(condition, "lastTransitionTime", fallback);
    }
  }
  return fallback;
}

Json BatchStatus(const Json& stored, const Json& spec) {
  const Json& native = MemberOrNull(stored, "status");
  const int64_t replicas = IntegerOr(MemberOrNull(stored, "spec"), "replicas", 1);
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
  if (phase == JobPhase::kSucceeded) {
    status["succeeded"] = replicas;
    if (StringMemberOr(spec, "completionMode") == "Indexed") {
      status["completedIndexes"] = IndexRange(replicas);
    }
    if (!end.empty()) status["completionTime"] = end;
    conditions.push_back(Condition("Complete", "CompletionsReached", message,
                                   ConditionTime(native, JobPhaseName(phase), end)));
  }
  const int64_t failed =
      IntegerOr(native, "restartCount", 0) + (phase == JobPhase::kFailed ? 1 : 0);
  if (failed > 0) status["failed"] = failed;
  if (phase == JobPhase::kFailed) {
    const std::string reason = StringMemberOr(native, "reason");
    conditions.push_back(Condition(
        "Failed", reason == kRestartsRanOut || reason.empty() ? "BackoffLimitExceeded" : reason,
        message, ConditionTime(native, JobPhaseName(phase), end)));
  }
  if (phase == JobPhase::kPending && MemberOrNull(spec, "suspend") == Json(true)) {
    conditions.push_back(
        Condition("Suspended", "JobSuspended", "Job suspended: it waits for its queue", ""));
  }
  if (!conditions.empty()) status["conditions"] = std::move(conditions);
  return status;
}

const Json* FindCondition(const Json& served, std::string_view type) {
  for (const Json& condition : MemberOrNull(MemberOrNull(served, "status"), "conditions")) {
    if (StringMemberOr(condition, "type") == type &&
        StringMemberOr(condition, "status") == "True") {
      return &condition;
    }
  }
  return nullptr;
}

}  // namespace

std::string BatchV1Source(const Json& spec) {
  Json defaulted = spec;
  DefaultSpec(defaulted);
  return Json{{"apiVersion", kBatchV1ApiVersion}, {"kind", kBatchJobKind}, {"spec", defaulted}}
      .dump();
}

bool IsBatchV1Job(const Json& stored) { return !SourceOf(stored).is_null(); }

Json ServedBatchV1Job(const Json& stored) {
  Json source = SourceOf(stored);
  if (source.is_null()) return stored;
  Json metadata = MemberOrNull(stored, "metadata");
  Json& annotations = metadata["annotations"];
  annotations.erase(kSourceAnnotation);
  if (annotations.empty()) metadata.erase("annotations");
  // The decoder reads Kueue's queue label into the native Job's queue.
  const std::string queue = StringMemberOr(MemberOrNull(stored, "spec"), "queue");
  if (!queue.empty()) metadata["labels"][std::string(kKueueQueueNameLabel)] = queue;
  Json spec = std::move(source["spec"]);
  Json status = BatchStatus(stored, spec);
  return {{"apiVersion", kBatchV1ApiVersion},
          {"kind", kBatchJobKind},
          {"metadata", std::move(metadata)},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

std::string BatchJobStatusCell(const Json& served) {
  for (std::string_view type : {"Failed", "Complete", "Suspended"}) {
    if (FindCondition(served, type) != nullptr) return std::string(type);
  }
  return "Running";
}

std::string BatchJobCompletionsCell(const Json& served) {
  const Json& spec = MemberOrNull(served, "spec");
  return std::to_string(IntegerOr(MemberOrNull(served, "status"), "succeeded", 0)) + "/" +
         std::to_string(IntegerOr(spec, "completions", IntegerOr(spec, "parallelism", 1)));
}

std::string BatchJobDurationCell(const Json& served, TimePoint now) {
  const Json& status = MemberOrNull(served, "status");
  const std::string start = StringMemberOr(status, "startTime");
  if (start.empty()) return "";
  const std::optional<TimePoint> end = ParseRfc3339(StringMemberOr(status, "completionTime"));
  return ShortAge(start, end.value_or(now));
}

}  // namespace strata::api
