#include "api/condition.h"

namespace strata::api {

bool SetCondition(std::vector<Condition>& conditions, std::string_view type,
                  std::string_view status, std::string_view reason, std::string_view message,
                  TimePoint now) {
  Condition wanted{std::string(type), std::string(status), std::string(reason),
                   std::string(message), FormatRfc3339(now)};
  for (Condition& condition : conditions) {
    if (condition.type != type) continue;
    if (condition.status == status) wanted.last_transition_time = condition.last_transition_time;
    if (condition == wanted) return false;
    condition = std::move(wanted);
    return true;
  }
  conditions.push_back(std::move(wanted));
  return true;
}

const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type) {
  for (const Condition& condition : conditions) {
    if (condition.type == type) return &condition;
  }
  return nullptr;
}

}  // namespace strata::api
