#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "store/store.h"

namespace strata::store {

// A committed change as the store records it: the event plus what a label-filtered watcher
// needs to tell whether the object entered or left its selection.
struct Change {
  WatchEvent event;
  // For kModified: the labels before the write.
  std::optional<Labels> previous_labels;

  bool operator==(const Change&) const = default;
};

// How `change` looks to a watcher of `selection`: nullopt when it does not concern it. A label
// change that moves an object into the selection reads as kAdded, out of it as kDeleted, as in
// Kubernetes.
std::optional<WatchEvent> ViewThrough(const Selection& selection, const Change& change);

class WatchQueue;

// The set of live watchers of one store, and the fan-out of committed changes to them. Owned by
// the store (shared with its watchers, which unsubscribe on destruction). Thread-safe; the
// store calls Subscribe and Publish under its own lock, so that no change falls between a
// watcher's backlog and its live events.
class WatchHub : public std::enable_shared_from_this<WatchHub> {
 public:
  // Changes for which some watcher must be told; run Notify() on each after releasing the
  // store's lock.
  class PendingNotifications {
   public:
    void Add(std::shared_ptr<WatchQueue> queue) { queues_.push_back(std::move(queue)); }
    void Run();

   private:
    std::vector<std::shared_ptr<WatchQueue>> queues_;
  };

  // A watcher that starts with `backlog` (the kept changes after the requested version,
  // delivered whatever the buffer limit) and has seen everything up to `progress_version`.
  std::unique_ptr<Watcher> Subscribe(const WatchOptions& options,
                                     const std::vector<const Change*>& backlog,
                                     int64_t progress_version);

  // Offers committed `changes`, in version order, to every watcher; adds to `pending` those
  // that got something (or expired).
  void Publish(const std::vector<Change>& changes, PendingNotifications* pending);

  // Ends every watcher with Cancelled ("the store was closed") once it has drained its events.
  void Close();

 private:
  friend class HubWatcher;
  void Unsubscribe(uint64_t id);

  std::mutex mutex_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::shared_ptr<WatchQueue>> queues_;
};

}  // namespace strata::store
