#pragma once

#include <string>
#include <string_view>

#include "api/object.h"
#include "api/pod.h"
#include "cluster/event_recorder.h"
#include "cluster/stored_object.h"
#include "store/store.h"

namespace strata::controller {

// The writes of one object's reconcile (a job's, a service's), made one object at a time in the
// order they are asked for. The store has no transaction across objects (Kubernetes has none),
// so the order is the contract: a reconciler makes the write that records its decision first
// (the commit point: a job's status), and every later write follows from what the store then
// holds, so a crash between any two writes leaves a state the next pass finishes. Once a write
// fails the later ones are skipped (the next pass redoes them from what it reads). Events are
// best effort, as in Kubernetes: a failed one is logged and never stops the others.
//
// A plain value owned by one pass; not thread-safe.
class ObjectWriter {
 public:
  ObjectWriter(store::Store& store, cluster::EventRecorder& events, cluster::EventSubject subject)
      : store_(store), events_(events), subject_(std::move(subject)) {}

  // Creates `object`.
  void Create(const api::Object& object);
  // Replaces the stored object with `object`, guarded by the stored resource version and uid.
  void Update(const store::Object& stored, const api::Object& object);
  template <typename T>
  void Update(const cluster::Stored<T>& stored, T value) {
    Update(stored.raw, api::Object(std::move(value)));
  }
  // Deletes the stored object, guarded by its resource version.
  void Delete(const store::Object& stored);
  template <typename T>
  void Delete(const cluster::Stored<T>& stored) {
    Delete(stored.raw);
  }
  // Marks a live pod for stopping (api::RequestStop); a terminal pod or one already marked is
  // left alone.
  void StopPod(const cluster::Stored<api::Pod>& stored, std::string_view reason,
               std::string_view message);
  // Records an event about the subject (deduplicated by the recorder).
  void Event(std::string_view type, std::string_view reason, const std::string& message);

  // The first failed write's error, or Ok.
  const Status& status() const { return status_; }
  // Whether a write failed (the later ones were skipped).
  bool failed() const { return !status_.ok(); }
  // The object writes (creations, updates, deletions; not events) tried so far.
  int64_t writes() const { return writes_; }

 private:
  void Keep(Status status);

  store::Store& store_;
  cluster::EventRecorder& events_;
  cluster::EventSubject subject_;
  Status status_;
  int64_t writes_ = 0;
};

}  // namespace strata::controller
