#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"

namespace strata::controller {

// Job phases, as `strata get jobs` shows them.
inline constexpr std::string_view kJobPending = "Pending";
inline constexpr std::string_view kJobRunning = "Running";
inline constexpr std::string_view kJobRestarting = "Restarting";
inline constexpr std::string_view kJobSucceeded = "Succeeded";
inline constexpr std::string_view kJobFailed = "Failed";

// One condition of a job, Kubernetes' shape. Types: Scheduled (False while it waits, with the
// scheduler's reason tier and message), Running, Restarting, Succeeded, Failed.
struct JobCondition {
  std::string type;
  std::string status;  // True | False
  std::string reason;
  std::string message;
  std::string last_transition_time;  // RFC 3339

  bool operator==(const JobCondition&) const = default;
};

// The status of a Job, which the scheduler adapter and the job controller own. It lives under
// `status` in the Job's stored body (the api model describes only the spec). A plain value.
struct JobStatus {
  std::string phase = std::string(kJobPending);
  int64_t restart_count = 0;         // whole-group restarts after failures
  int64_t preemption_count = 0;      // times the job was preempted and requeued
  std::string reason;                // why it waits or why it ended: one CamelCase word
  std::string message;               // a sentence for people
  std::string start_time;            // RFC 3339; first time every pod ran
  std::string completion_time;       // RFC 3339; when it succeeded or failed
  std::string last_checkpoint_time;  // RFC 3339; the newest checkpoint its pods reported
  std::vector<JobCondition> conditions;

  bool operator==(const JobStatus&) const = default;

  bool Terminal() const { return phase == kJobSucceeded || phase == kJobFailed; }

  // Sets the condition of `type`; its transition time changes only when its status does.
  // Returns true when anything changed.
  bool SetCondition(std::string_view type, std::string_view status, std::string_view reason,
                    std::string_view message, TimePoint now);
  const JobCondition* FindCondition(std::string_view type) const;
};

// Reads `body["status"]`; a missing status, or a field of the wrong type, reads as its default
// (the status is written only by strata's loops).
JobStatus ReadJobStatus(const nlohmann::json& body);

// Writes `status` into `body["status"]`, leaving out empty fields.
void WriteJobStatus(const JobStatus& status, nlohmann::json& body);

}  // namespace strata::controller
