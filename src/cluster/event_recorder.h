#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "store/store.h"

namespace strata::cluster {

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
// every pass; the recorder remembers what it wrote, so such a repeat costs no store read either.
// Events of cluster-scoped objects go to the "default" namespace. Events are best effort, as in
// Kubernetes: a lost one is never retried, and no reconcile depends on one.
//
// Owned by one control loop; not thread-safe.
class EventRecorder {
 public:
  EventRecorder(store::Store& store, const Clock& clock, Duration repeat_interval)
      : store_(store), clock_(clock), repeat_interval_(repeat_interval) {}

  // Writes the event (a create, or an update of the existing one guarded by its resource
  // version), or nothing when the same event was recorded less than repeat_interval ago.
  // `type` is Normal or Warning. Returns the store's error.
  Status Record(const EventSubject& subject, std::string_view type, std::string_view reason,
                std::string_view message);

 private:
  static constexpr size_t kMemoLimit = 4096;

  store::Store& store_;
  const Clock& clock_;
  Duration repeat_interval_;
  // When this recorder last wrote each event (by key); forgotten wholesale past kMemoLimit.
  std::map<store::ObjectKey, TimePoint> written_;
};

}  // namespace strata::cluster
