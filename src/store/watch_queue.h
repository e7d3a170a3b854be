#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>

#include "store/store.h"
#include "store/watch_hub.h"

namespace strata::store {

// The buffer of one watcher: filled by a producer (the hub of an embedded store, or the thread
// reading a remote watch), drained by the consumer through a Watcher that owns or shares it.
// Thread-safe.
class WatchQueue {
 public:
  WatchQueue(Selection selection, size_t buffer_limit, int64_t progress_version)
      : selection_(std::move(selection)),
        buffer_limit_(buffer_limit),
        dispatched_version_(progress_version) {}

  // Offers a committed change, seen through the queue's selection. Past the buffer limit (when
  // enforced) the queue ends with Expired and drops what it held. Returns true when the
  // consumer has something new to look at.
  bool Offer(const Change& change, bool enforce_limit);

  // A bookmark: every change up to `version` has been offered.
  void Advance(int64_t version);

  // Ends the queue with `status` once the consumer has drained what it holds; the first end
  // wins.
  void End(Status status);

  // Watcher's methods.
  Result<WatchEvent> Next(Duration timeout);
  Result<std::optional<WatchEvent>> TryNext();
  int64_t ProgressVersion() const;
  void SetNotify(std::function<void()> notify);

  // Runs the consumer's callback, if any. Serialised with SetNotify, so that once
  // SetNotify({}) returns no callback runs any more. Call it without holding other locks.
  void Notify();

 private:
  Result<WatchEvent> PopLocked();

  const Selection selection_;
  const size_t buffer_limit_;

  mutable std::mutex mutex_;
  std::condition_variable available_;
  std::deque<WatchEvent> events_;
  int64_t dispatched_version_;
  Status end_;  // OK while the watch is live

  std::mutex notify_mutex_;
  std::function<void()> notify_;
};

}  // namespace strata::store
