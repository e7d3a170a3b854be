#include "cluster/store_follower.h"

#include <spdlog/spdlog.h>

#include <optional>

namespace strata::cluster {

StoreFollower::StoreFollower(store::Store& store, std::vector<std::string> kinds,
                             size_t watch_buffer, FollowedObjects& objects)
    : store_(store), kinds_(std::move(kinds)), watch_buffer_(watch_buffer), objects_(objects) {}

StoreFollower::~StoreFollower() {
  {
    std::lock_guard wake(wake_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (follower_.joinable()) follower_.join();
  // The watcher's callback touches the wake members, which are destroyed before watcher_ would
  // be; once the watcher is gone, the callback never runs again.
  std::lock_guard lock(mutex_);
  watcher_.reset();
}

Status StoreFollower::Read(const std::function<void()>& read) {
  std::lock_guard lock(mutex_);
  if (Status drained = DrainLocked(store_.CurrentVersion()); !drained.ok()) return drained;
  if (!follower_.joinable()) follower_ = std::thread([this] { Follow(); });
  read();
  return Status::Ok();
}

Status StoreFollower::DrainLocked(int64_t up_to) {
  while (true) {
    if (watcher_ == nullptr) {
      if (Status listed = RelistLocked(); !listed.ok()) return listed;
    }
    Result<std::optional<store::WatchEvent>> next = watcher_->TryNext();
    if (!next) {
      // Expired: the watch fell behind and dropped what it held; list again.
      watcher_.reset();
      continue;
    }
    if (!next->has_value()) return Status::Ok();
    store::WatchEvent& event = **next;
    const int64_t version = event.object.resource_version;
    // A kind not followed, or a change its list already holds.
    auto listed = listed_versions_.find(event.object.key.kind);
    if (listed == listed_versions_.end() || version <= listed->second) continue;
    if (event.type == store::WatchEventType::kDeleted) {
      objects_.Remove(event.object);
    } else {
      objects_.Put(std::move(event.object));
    }
    if (version >= up_to) return Status::Ok();
  }
}

Status StoreFollower::RelistLocked() {
  watcher_.reset();
  objects_.Clear();
  listed_versions_.clear();
  store::WatchOptions watch;
  watch.buffer_limit = watch_buffer_;
  // Watching before listing: whatever changes after a kind's list is in the watch.
  Result<std::unique_ptr<store::Watcher>> watcher = store_.Watch(watch);
  if (!watcher) return watcher.error();
  for (const std::string& kind : kinds_) {
    Result<store::ListResult> listed = store_.List({kind, std::nullopt, {}});
    if (!listed) return listed.error();
    for (store::Object& object : listed->items) objects_.Put(std::move(object));
    listed_versions_[kind] = listed->resource_version;
  }
  objects_.Relisted();
  (*watcher)->SetNotify([this] {
    {
      std::lock_guard wake(wake_mutex_);
      changes_waiting_ = true;
    }
    wake_.notify_one();
  });
  watcher_ = std::move(*watcher);
  return Status::Ok();
}

void StoreFollower::Follow() {
  while (true) {
    {
      std::unique_lock wake(wake_mutex_);
      wake_.wait(wake, [&] { return stopping_ || changes_waiting_; });
      if (stopping_) return;
      changes_waiting_ = false;
    }
    // Drains in steps up to the version current when woken, so a Read waiting for mutex_ is
    // never held back by a stream of writes.
    std::lock_guard lock(mutex_);
    if (watcher_ == nullptr) continue;  // the next Read lists again
    Status drained = DrainLocked(store_.CurrentVersion());
    if (!drained.ok()) {
      spdlog::warn("store follower: listing the store failed ({}); the next read retries",
                   drained.ToString());
    }
  }
}

}  // namespace strata::cluster
