#include "controller/node_leases.h"

#include <algorithm>

namespace strata::controller {

void NodeLeases::Renew(const std::string& node_name, TimePoint now) {
  std::lock_guard lock(mutex_);
  TimePoint& renewed = renewed_[node_name];
  renewed = std::max(renewed, now);
}

void NodeLeases::Forget(const std::string& node_name) {
  std::lock_guard lock(mutex_);
  renewed_.erase(node_name);
}

std::optional<TimePoint> NodeLeases::Renewed(const std::string& node_name) const {
  std::lock_guard lock(mutex_);
  auto it = renewed_.find(node_name);
  if (it == renewed_.end()) return std::nullopt;
  return it->second;
}

TimePoint NodeLeases::AliveAt(const std::string& node_name) const {
  return std::max(since_, Renewed(node_name).value_or(since_));
}

}  // namespace strata::controller
