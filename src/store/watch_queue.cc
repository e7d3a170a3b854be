#include "store/watch_queue.h"

#include <algorithm>
#include <string>

namespace strata::store {

bool WatchQueue::Offer(const Change& change, bool enforce_limit) {
  std::lock_guard lock(mutex_);
  if (!end_.ok()) return false;
  dispatched_version_ = change.event.object.resource_version;
  std::optional<WatchEvent> event = ViewThrough(selection_, change);
  if (!event) return false;
  if (enforce_limit && events_.size() >= buffer_limit_) {
    events_.clear();
    end_ = ExpiredError("watch fell behind: more than " + std::to_string(buffer_limit_) +
                        " events waiting; list again and watch from the list's version");
  } else {
    events_.push_back(std::move(*event));
  }
  available_.notify_all();
  return true;
}

void WatchQueue::Advance(int64_t version) {
  std::lock_guard lock(mutex_);
  dispatched_version_ = std::max(dispatched_version_, version);
}

void WatchQueue::End(Status status) {
  std::lock_guard lock(mutex_);
  if (!end_.ok()) return;
  end_ = std::move(status);
  available_.notify_all();
}

Result<WatchEvent> WatchQueue::Next(Duration timeout) {
  std::unique_lock lock(mutex_);
  available_.wait_for(lock, timeout, [&] { return !events_.empty() || !end_.ok(); });
  if (events_.empty() && end_.ok()) {
    return Err(DeadlineExceededError("no watch event within the timeout"));
  }
  return PopLocked();
}

Result<std::optional<WatchEvent>> WatchQueue::TryNext() {
  std::lock_guard lock(mutex_);
  if (events_.empty() && end_.ok()) return std::nullopt;
  ASSIGN_OR_RETURN(WatchEvent event, PopLocked());
  return event;
}

int64_t WatchQueue::ProgressVersion() const {
  std::lock_guard lock(mutex_);
  if (events_.empty()) return dispatched_version_;
  return events_.front().object.resource_version - 1;
}

void WatchQueue::SetNotify(std::function<void()> notify) {
  bool ready;
  {
    std::lock_guard lock(notify_mutex_);
    notify_ = std::move(notify);
  }
  {
    std::lock_guard lock(mutex_);
    ready = !events_.empty() || !end_.ok();
  }
  if (ready) Notify();
}

void WatchQueue::Notify() {
  std::lock_guard lock(notify_mutex_);
  if (notify_) notify_();
}

Result<WatchEvent> WatchQueue::PopLocked() {
  if (events_.empty()) return Err(end_);
  WatchEvent event = std::move(events_.front());
  events_.pop_front();
  return event;
}

}  // namespace strata::store
