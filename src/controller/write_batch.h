#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/pod.h"
#include "controller/event_recorder.h"
#include "controller/stored_objects.h"
#include "store/store.h"

namespace strata::controller {

// The writes of one object's reconcile (a job's, a service's), committed as one store batch:
// all of them or none. Collects pod updates, deletions and events; the first error met while
// recording an event is kept and fails the batch. A plain value owned by one pass.
struct WriteBatch {
  const EventRecorder& events;
  EventSubject subject;
  std::vector<store::Write> writes;
  Status error;

  // Records an event about `subject` (deduplicated by the recorder).
  void Event(std::string_view type, std::string_view reason, const std::string& message);
  // Marks a live pod for stopping (controller/training_pod.h RequestStop); a terminal pod or one
  // already marked is left alone.
  void StopPod(const Stored<api::Pod>& stored, std::string_view reason, std::string_view message);
  // Replaces the stored pod with `pod`, guarded by the stored resource version.
  void UpdatePod(const Stored<api::Pod>& stored, api::Pod pod);
  // Deletes the stored pod, guarded by its resource version.
  void DeletePod(const Stored<api::Pod>& stored);
  // Applies the writes as one batch: the recorded error, the store's, or Ok (also when empty).
  Status Commit(store::Store& store);
};

}  // namespace strata::controller
