#include "server/local_queue_watcher.h"

#include <algorithm>
#include <charconv>

#include "common/json_member.h"

namespace strata::server {
namespace {

using Json = nlohmann::json;

std::string KeyOf(const Json& served) {
  const Json& metadata = MemberOrNull(served, "metadata");
  return StringMemberOr(metadata, "namespace") + "/" + StringMemberOr(metadata, "name");
}

// The LocalQueues `stored` (a Queue as stored) keeps, by "namespace/name".
std::map<std::string, Json> LocalQueuesOf(const Json& stored) {
  std::map<std::string, Json> out;
  for (Json& served : api::ServedLocalQueues(stored)) {
    std::string key = KeyOf(served);
    out.emplace(std::move(key), std::move(served));
  }
  return out;
}

// `served` without its resourceVersion: a write of its Queue that changed nothing of it (the
// ClusterQueue's labels, another LocalQueue) does not change it.
Json WithoutVersion(Json served) {
  if (served.contains("metadata")) served["metadata"].erase("resourceVersion");
  return served;
}

// A LocalQueue as served, as an object of the store's shape.
store::Object AsObject(const Json& served, int64_t version) {
  store::Object object;
  const Json& metadata = MemberOrNull(served, "metadata");
  object.key = {"LocalQueue", StringMemberOr(metadata, "namespace"),
                StringMemberOr(metadata, "name")};
  for (const auto& [key, value] : MemberOrNull(metadata, "labels").items()) {
    if (value.is_string()) object.labels[key] = value.get<std::string>();
  }
  object.resource_version = version;
  object.body = served;
  return object;
}

}  // namespace

LocalQueueWatcher::LocalQueueWatcher(const std::vector<store::Object>& queues,
                                     std::unique_ptr<store::Watcher> queue_watcher,
                                     const std::vector<store::Object>& jobs,
                                     std::unique_ptr<store::Watcher> job_watcher)
    : queue_watcher_(std::move(queue_watcher)), job_watcher_(std::move(job_watcher)) {
  for (const store::Object& queue : queues) {
    std::map<std::string, Json> kept = LocalQueuesOf(queue.body);
    if (!kept.empty()) by_queue_[queue.key.name] = std::move(kept);
  }
  for (const store::Object& job : jobs) {
    const api::LocalQueueWorkload workload = api::LocalQueueWorkloadOf(job.body);
    if (workload.local_queue.empty()) continue;
    auto& [pending, admitted] = counts_[workload.local_queue];
    pending += workload.pending ? 1 : 0;
    admitted += workload.admitted ? 1 : 0;
    jobs_[job.key.namespace_name + "/" + job.key.name] = workload;
  }
  for (const auto& [queue, kept] : by_queue_) {
    for (const auto& [key, served] : kept) sent_[key] = WithStatus(served);
  }
}

Json LocalQueueWatcher::WithStatus(Json served) const {
  auto it = counts_.find(KeyOf(served));
  const auto [pending, admitted] =
      it == counts_.end() ? std::pair<int64_t, int64_t>{0, 0} : it->second;
  served["status"] = api::LocalQueueStatus(
      pending, admitted, StringMemberOr(MemberOrNull(served, "metadata"), "creationTimestamp"));
  return served;
}

void LocalQueueWatcher::Emit(const std::string& key, Json served, int64_t version) {
  auto it = sent_.find(key);
  if (served.is_null()) {
    if (it == sent_.end()) return;
    ready_.push_back({store::WatchEventType::kDeleted, AsObject(it->second, version)});
    sent_.erase(it);
    return;
  }
  if (it != sent_.end() && WithoutVersion(it->second) == WithoutVersion(served)) return;
  const store::WatchEventType type =
      it == sent_.end() ? store::WatchEventType::kAdded : store::WatchEventType::kModified;
  ready_.push_back({type, AsObject(served, version)});
  sent_[key] = std::move(served);
}

void LocalQueueWatcher::OnQueue(const store::WatchEvent& event) {
  const std::string& name = event.object.key.name;
  std::map<std::string, Json> kept;
  if (event.type != store::WatchEventType::kDeleted) kept = LocalQueuesOf(event.object.body);
  std::map<std::string, Json> before;
  if (auto it = by_queue_.find(name); it != by_queue_.end()) before = std::move(it->second);
  if (kept.empty()) {
    by_queue_.erase(name);
  } else {
    by_queue_[name] = kept;
  }
  for (const auto& [key, served] : before) {
    if (!kept.contains(key)) Emit(key, Json(), event.object.resource_version);
  }
  for (auto& [key, served] : kept) {
    Emit(key, WithStatus(std::move(served)), event.object.resource_version);
  }
}

void LocalQueueWatcher::OnJob(const store::WatchEvent& event) {
  const std::string job = event.object.key.namespace_name + "/" + event.object.key.name;
  api::LocalQueueWorkload now;
  if (event.type != store::WatchEventType::kDeleted) {
    now = api::LocalQueueWorkloadOf(event.object.body);
  }
  api::LocalQueueWorkload before;
  if (auto it = jobs_.find(job); it != jobs_.end()) before = it->second;
  if (now == before) return;
  if (!before.local_queue.empty()) {
    auto& [pending, admitted] = counts_[before.local_queue];
    pending -= before.pending ? 1 : 0;
    admitted -= before.admitted ? 1 : 0;
  }
  if (!now.local_queue.empty()) {
    auto& [pending, admitted] = counts_[now.local_queue];
    pending += now.pending ? 1 : 0;
    admitted += now.admitted ? 1 : 0;
  }
  if (now.local_queue.empty()) {
    jobs_.erase(job);
  } else {
    jobs_[job] = now;
  }
  // The LocalQueues whose counts moved, as their Queues keep them.
  for (const std::string& key : {before.local_queue, now.local_queue}) {
    auto sent = sent_.find(key);
    if (key.empty() || sent == sent_.end()) continue;
    const std::string queue = StringMemberOr(MemberOrNull(sent->second, "spec"), "clusterQueue");
    auto kept = by_queue_.find(queue);
    if (kept == by_queue_.end() || !kept->second.contains(key)) continue;
    Emit(key, WithStatus(kept->second.at(key)), event.object.resource_version);
  }
}

Result<std::optional<store::WatchEvent>> LocalQueueWatcher::TryNext() {
  if (ready_.empty()) {
    // What both watchers have, applied in the order of the writes.
    std::vector<std::pair<store::WatchEvent, bool>> changes;  // true: a Queue's
    for (store::Watcher* watcher : {queue_watcher_.get(), job_watcher_.get()}) {
      while (true) {
        ASSIGN_OR_RETURN(std::optional<store::WatchEvent> next, watcher->TryNext());
        if (!next) break;
        changes.emplace_back(std::move(*next), watcher == queue_watcher_.get());
      }
    }
    std::stable_sort(changes.begin(), changes.end(), [](const auto& a, const auto& b) {
      return a.first.object.resource_version < b.first.object.resource_version;
    });
    for (const auto& [change, of_queue] : changes) {
      if (of_queue) {
        OnQueue(change);
      } else {
        OnJob(change);
      }
    }
  }
  if (ready_.empty()) return std::optional<store::WatchEvent>();
  store::WatchEvent event = std::move(ready_.front());
  ready_.pop_front();
  return std::optional<store::WatchEvent>(std::move(event));
}

Result<store::WatchEvent> LocalQueueWatcher::Next(Duration timeout) {
  ASSIGN_OR_RETURN(std::optional<store::WatchEvent> ready, TryNext());
  if (ready) return std::move(*ready);
  ASSIGN_OR_RETURN(store::WatchEvent queue_event, queue_watcher_->Next(timeout));
  OnQueue(queue_event);
  ASSIGN_OR_RETURN(ready, TryNext());
  if (ready) return std::move(*ready);
  return Err(DeadlineExceededError("no LocalQueue changed"));
}

void LocalQueueWatcher::SetNotify(std::function<void()> notify) {
  queue_watcher_->SetNotify(notify);
  job_watcher_->SetNotify(std::move(notify));
}

int64_t LocalQueueWatcher::ProgressVersion() const {
  return std::min(queue_watcher_->ProgressVersion(), job_watcher_->ProgressVersion());
}

std::vector<store::Object> LocalQueueWatcher::Current() const {
  std::vector<store::Object> out;
  for (const auto& [key, served] : sent_) {
    // Its version is its Queue's (api::ServedLocalQueues), a number the store wrote.
    const std::string version = StringMemberOr(MemberOrNull(served, "metadata"), "resourceVersion");
    int64_t number = 0;
    std::from_chars(version.data(), version.data() + version.size(), number);
    out.push_back(AsObject(served, number));
  }
  return out;
}

}  // namespace strata::server
