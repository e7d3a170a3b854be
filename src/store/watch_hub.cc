#include "store/watch_hub.h"

#include "store/watch_queue.h"

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
