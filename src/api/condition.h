#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"

namespace strata::api {

// One condition of an object's status, Kubernetes' shape: Scheduled, Running, Succeeded...
// with status True, False or Unknown. A plain value.
struct Condition {
  std::string type;
  std::string status;  // True | False | Unknown
  std::string reason;
  std::string message;
  std::string last_transition_time;  // RFC 3339

  bool operator==(const Condition&) const = default;
};

// Sets the condition of `type` in `conditions`; its transition time changes only when its
// status does. Returns true when anything changed.
bool SetCondition(std::vector<Condition>& conditions, std::string_view type,
                  std::string_view status, std::string_view reason, std::string_view message,
                  TimePoint now);

// The condition of `type`, or nullptr.
const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type);

}  // namespace strata::api
