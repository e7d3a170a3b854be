#include "store/watch_hub.h"

#include <condition_variable>
#include <deque>
#include <string>

namespace strata::store {

std::optional<WatchEvent> ViewThrough(const Selection& selection, const Change& change) {
  const Object& object = change.event.object;
  if (!selection.kind.empty() && selection.kind != object.key.kind) return std::nullopt;
  if (selection.namespace_name && *selection.namespace_name != object.key.namespace_name) {
    return std::nullopt;
  }
  bool matches_now = selection.labels.Matches(object.labels);
  if (change.event.type != WatchEventType::kModified || !change.previous_labels) {
    if (!matches_now) return std::nullopt;
    return change.event;
  }
  bool matched_before = selection.labels.Matches(*change.previous_labels);
  if (matched_before && matches_now) return change.event;
  if (matches_now) return WatchEvent{WatchEventType::kAdded, object};
  if (matched_before) return WatchEvent{WatchEventType::kDeleted, object};
  return std::nullopt;
}

// The buffer of one watcher: filled by writers through the hub, drained by the consumer.
// Shared by the hub and the HubWatcher. Thread-safe.
class WatchQueue {
 public:
  WatchQueue(Selection selection, size_t buffer_limit, int64_t progress_version)
      : selection_(std::move(selection)),
        buffer_limit_(buffer_limit),
        dispatched_version_(progress_version) {}

  // Returns true when the consumer has something new to look at.
  bool Offer(const Change& change, bool enforce_limit) {
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

  void End(Status status) {
    std::lock_guard lock(mutex_);
    if (!end_.ok()) return;
    end_ = std::move(status);
    available_.notify_all();
  }

  Result<WatchEvent> Next(Duration timeout) {
    std::unique_lock lock(mutex_);
    available_.wait_for(lock, timeout, [&] { return !events_.empty() || !end_.ok(); });
    if (events_.empty() && end_.ok()) {
      return Err(DeadlineExceededError("no watch event within the timeout"));
    }
    return PopLocked();
  }

  Result<std::optional<WatchEvent>> TryNext() {
    std::lock_guard lock(mutex_);
    if (events_.empty() && end_.ok()) return std::nullopt;
    ASSIGN_OR_RETURN(WatchEvent event, PopLocked());
    return event;
  }

  int64_t ProgressVersion() const {
    std::lock_guard lock(mutex_);
    if (events_.empty()) return dispatched_version_;
    return events_.front().object.resource_version - 1;
  }

  void SetNotify(std::function<void()> notify) {
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

  // Serialised with SetNotify, so that once SetNotify({}) returns no callback runs any more.
  void Notify() {
    std::lock_guard lock(notify_mutex_);
    if (notify_) notify_();
  }

 private:
  Result<WatchEvent> PopLocked() {
    if (events_.empty()) return Err(end_);
    WatchEvent event = std::move(events_.front());
    events_.pop_front();
    return event;
  }

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

// The consumer's handle: drains its queue and unsubscribes when destroyed.
class HubWatcher final : public Watcher {
 public:
  HubWatcher(std::weak_ptr<WatchHub> hub, uint64_t id, std::shared_ptr<WatchQueue> queue)
      : hub_(std::move(hub)), id_(id), queue_(std::move(queue)) {}

  ~HubWatcher() override {
    queue_->SetNotify(nullptr);
    if (std::shared_ptr<WatchHub> hub = hub_.lock()) hub->Unsubscribe(id_);
  }

  Result<WatchEvent> Next(Duration timeout) override { return queue_->Next(timeout); }
  Result<std::optional<WatchEvent>> TryNext() override { return queue_->TryNext(); }
  void SetNotify(std::function<void()> notify) override { queue_->SetNotify(std::move(notify)); }
  int64_t ProgressVersion() const override { return queue_->ProgressVersion(); }

 private:
  std::weak_ptr<WatchHub> hub_;
  uint64_t id_;
  std::shared_ptr<WatchQueue> queue_;
};

void WatchHub::PendingNotifications::Run() {
  for (const std::shared_ptr<WatchQueue>& queue : queues_) queue->Notify();
  queues_.clear();
}

std::unique_ptr<Watcher> WatchHub::Subscribe(const WatchOptions& options,
                                             const std::vector<const Change*>& backlog,
                                             int64_t progress_version) {
  auto queue =
      std::make_shared<WatchQueue>(options.selection, options.buffer_limit, progress_version);
  for (const Change* change : backlog) queue->Offer(*change, /*enforce_limit=*/false);
  std::lock_guard lock(mutex_);
  uint64_t id = next_id_++;
  queues_.emplace(id, queue);
  return std::make_unique<HubWatcher>(weak_from_this(), id, std::move(queue));
}

void WatchHub::Publish(const std::vector<Change>& changes, PendingNotifications* pending) {
  std::lock_guard lock(mutex_);
  for (const auto& [id, queue] : queues_) {
    bool touched = false;
    for (const Change& change : changes) touched |= queue->Offer(change, /*enforce_limit=*/true);
    if (touched) pending->Add(queue);
  }
}

void WatchHub::Close() {
  std::map<uint64_t, std::shared_ptr<WatchQueue>> queues;
  {
    std::lock_guard lock(mutex_);
    queues.swap(queues_);
  }
  for (const auto& [id, queue] : queues) {
    queue->End(CancelledError("the store was closed"));
    queue->Notify();
  }
}

void WatchHub::Unsubscribe(uint64_t id) {
  std::lock_guard lock(mutex_);
  queues_.erase(id);
}

}  // namespace strata::store
