#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "store/store.h"

namespace strata::controller {

// The object an event is about.
struct EventSubject {
  std::string kind;
  std::string namespace_name;  // empty for cluster-scoped kinds
  std::string name;
  std::string uid;
};

// Records Events the way Kubernetes aggregates them: one Event object per (object, type,
// reason, message), whose `count` and `lastTimestamp` grow when the same thing happens again,
// instead of a new event each time. A repeat within `repeat_interval` of the last one is not
// written at all, so a loop that explains the same pending workload every pass does not write
// every pass. Events of cluster-scoped objects go to the "default" namespace.
//
// Owned by one control loop; reads the store (thread-safe) and holds no other state, so it is
// as thread-safe as its store and clock.
class EventRecorder {
 public:
  EventRecorder(const store::Store& store, const Clock& clock, Duration repeat_interval)
      : store_(store), clock_(clock), repeat_interval_(repeat_interval) {}

  // The write that records the event (a create, or an update of the existing one guarded by its
  // resource version), or nullopt when the same event was recorded less than repeat_interval
  // ago. `type` is Normal or Warning. Returns the store's error when reading the existing event
  // fails for another reason than NotFound.
  Result<std::optional<store::Write>> Record(const EventSubject& subject, std::string_view type,
                                             std::string_view reason,
                                             std::string_view message) const;

 private:
  const store::Store& store_;
  const Clock& clock_;
  Duration repeat_interval_;
};

}  // namespace strata::controller
