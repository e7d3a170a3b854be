#include "cluster/cache.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "cluster/stored_object.h"
#include "common/check.h"

namespace strata::cluster {

// One followed kind: its watch and the version its last list was taken at (the watch's events
// up to it are already in the list).
struct Cache::KindState {
  std::string kind;
  std::unique_ptr<store::Watcher> watcher;
  int64_t listed_version = 0;
  bool listed = false;
};

// One secondary index: value -> keys.
struct Cache::Index {
  IndexSpec spec;
  std::map<std::string, std::set<store::ObjectKey>, std::less<>> keys;
};

namespace {

ObjectRef Decode(store::Object raw) {
  auto cached = std::make_shared<CachedObject>();
  Result<api::Object> decoded = DecodeStoredObject(raw);
  if (decoded) {
    cached->object = std::move(*decoded);
  } else {
    cached->error = decoded.error();
  }
  cached->raw = std::move(raw);
  return cached;
}

}  // namespace

Cache::Cache(store::Store& store, CacheOptions options)
    : store_(store), options_(std::move(options)) {
  for (const std::string& kind : options_.kinds) {
    auto state = std::make_unique<KindState>();
    state->kind = kind;
    kinds_.emplace(kind, std::move(state));
    notified_[kind] = 0;
  }
  for (const IndexSpec& spec : options_.indexes) {
    auto index = std::make_unique<Index>();
    index->spec = spec;
    indexes_.emplace(spec.name, std::move(index));
  }
}

Cache::~Cache() {
  // The watchers' callbacks touch notify members; once a watcher is gone they never run again.
  std::lock_guard lock(sync_mutex_);
  for (auto& [name, kind] : kinds_) kind->watcher.reset();
}

Status Cache::Sync() {
  std::lock_guard lock(sync_mutex_);
  const int64_t up_to = store_.CurrentVersion();
  for (auto& [name, kind] : kinds_) {
    while (true) {
      if (!kind->listed) {
        if (Status listed = ListKindLocked(*kind); !listed.ok()) return listed;
      }
      Result<std::optional<store::WatchEvent>> next = kind->watcher->TryNext();
      if (!next) {
        // Expired (the watch fell behind and dropped what it held) or the store is going:
        // list this kind again.
        spdlog::info("cluster cache: the watch of {} ended ({}); listing again", name,
                     next.error().ToString());
        kind->watcher.reset();
        kind->listed = false;
        continue;
      }
      if (!next->has_value()) break;
      store::WatchEvent& event = **next;
      const int64_t version = event.object.resource_version;
      if (version > kind->listed_version) {
        std::unique_lock state(state_mutex_);
        ApplyLocked(event.type, std::move(event.object));
      }
      if (version >= up_to) break;
    }
  }
  return Status::Ok();
}

Status Cache::ListKindLocked(KindState& kind) {
  store::WatchOptions watch;
  watch.selection.kind = kind.kind;
  watch.buffer_limit = options_.watch_buffer;
  // Watching before listing: whatever changes after the list is in the watch.
  Result<std::unique_ptr<store::Watcher>> watcher = store_.Watch(watch);
  if (!watcher) return watcher.error();
  Result<store::ListResult> listed = store_.List({kind.kind, std::nullopt, {}});
  if (!listed) return listed.error();
  lists_.fetch_add(1, std::memory_order_relaxed);

  std::unique_lock state(state_mutex_);
  // The list replaces what was held of the kind, each difference logged as a change, so a
  // consumer's cursor stays good across the relist.
  std::set<store::ObjectKey> listed_keys;
  for (store::Object& object : listed->items) {
    listed_keys.insert(object.key);
    auto held = objects_.find(object.key);
    if (held != objects_.end() && held->second->raw.resource_version == object.resource_version) {
      continue;
    }
    PutLocked(Decode(std::move(object)));
  }
  std::vector<store::ObjectKey> gone;
  for (auto it = objects_.lower_bound({kind.kind, "", ""});
       it != objects_.end() && it->first.kind == kind.kind; ++it) {
    if (listed_keys.count(it->first) == 0) gone.push_back(it->first);
  }
  for (const store::ObjectKey& key : gone) RemoveLocked(key);
  state.unlock();

  const std::string name = kind.kind;
  (*watcher)->SetNotify([this, name] {
    {
      std::lock_guard notify(notify_mutex_);
      ++notified_.find(name)->second;
    }
    notified_changed_.notify_all();
  });
  kind.watcher = std::move(*watcher);
  kind.listed_version = listed->resource_version;
  kind.listed = true;
  return Status::Ok();
}

void Cache::ApplyLocked(store::WatchEventType type, store::Object object) {
  if (type == store::WatchEventType::kDeleted) {
    RemoveLocked(object.key);
    return;
  }
  PutLocked(Decode(std::move(object)));
}

void Cache::PutLocked(ObjectRef ref) {
  const store::ObjectKey key = ref->raw.key;
  auto [it, inserted] = objects_.try_emplace(key, nullptr);
  if (!inserted) IndexLocked(*it->second, false);
  it->second = std::move(ref);
  IndexLocked(*it->second, true);
  deleted_.erase(key);
  LogLocked(key);
}

void Cache::RemoveLocked(const store::ObjectKey& key) {
  auto it = objects_.find(key);
  if (it == objects_.end()) return;
  IndexLocked(*it->second, false);
  deleted_[key] = {sequence_ + 1, std::move(it->second)};
  objects_.erase(it);
  LogLocked(key);
}

void Cache::LogLocked(const store::ObjectKey& key) {
  log_.emplace_back(++sequence_, key);
  while (log_.size() > options_.change_log_limit) {
    const auto& [sequence, oldest] = log_.front();
    // A deletion is its key's latest entry; its last state goes with it.
    auto deleted = deleted_.find(oldest);
    if (deleted != deleted_.end() && deleted->second.first == sequence) deleted_.erase(deleted);
    log_.pop_front();
  }
}

void Cache::IndexLocked(const CachedObject& object, bool add) {
  for (auto& [name, index] : indexes_) {
    if (index->spec.kind != object.raw.key.kind) continue;
    for (const std::string& value : index->spec.values(object)) {
      if (add) {
        index->keys[value].insert(object.raw.key);
        continue;
      }
      auto entry = index->keys.find(value);
      if (entry == index->keys.end()) continue;
      entry->second.erase(object.raw.key);
      if (entry->second.empty()) index->keys.erase(entry);
    }
  }
}

ObjectRef Cache::Get(const store::ObjectKey& key) const {
  std::shared_lock state(state_mutex_);
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : it->second;
}

std::vector<ObjectRef> Cache::List(std::string_view kind) const {
  std::shared_lock state(state_mutex_);
  std::vector<ObjectRef> out;
  for (auto it = objects_.lower_bound({std::string(kind), "", ""});
       it != objects_.end() && it->first.kind == kind; ++it) {
    out.push_back(it->second);
  }
  return out;
}

size_t Cache::Count(std::string_view kind) const {
  std::shared_lock state(state_mutex_);
  size_t count = 0;
  for (auto it = objects_.lower_bound({std::string(kind), "", ""});
       it != objects_.end() && it->first.kind == kind; ++it) {
    ++count;
  }
  return count;
}

std::vector<ObjectRef> Cache::Indexed(std::string_view index, std::string_view value) const {
  std::shared_lock state(state_mutex_);
  auto found = indexes_.find(index);
  STRATA_CHECK(found != indexes_.end());
  std::vector<ObjectRef> out;
  auto keys = found->second->keys.find(value);
  if (keys == found->second->keys.end()) return out;
  out.reserve(keys->second.size());
  for (const store::ObjectKey& key : keys->second) out.push_back(objects_.at(key));
  return out;
}

Changes Cache::ChangesSince(uint64_t cursor, const std::set<std::string>& kinds) const {
  std::shared_lock state(state_mutex_);
  Changes out;
  out.cursor = sequence_;
  const uint64_t oldest_logged = log_.empty() ? sequence_ + 1 : log_.front().first;
  if (cursor == 0 || cursor + 1 < oldest_logged) {
    out.resync = true;
    for (const std::string& kind : kinds) {
      for (auto it = objects_.lower_bound({kind, "", ""});
           it != objects_.end() && it->first.kind == kind; ++it) {
        out.changes.push_back({it->first, it->second, nullptr});
      }
    }
    return out;
  }
  // Walk back from the newest entry, keeping each key's latest change once; then put them
  // back in log order.
  std::set<store::ObjectKey> seen;
  for (auto it = log_.rbegin(); it != log_.rend() && it->first > cursor; ++it) {
    const store::ObjectKey& key = it->second;
    if (kinds.count(key.kind) == 0 || !seen.insert(key).second) continue;
    Change change;
    change.key = key;
    if (auto held = objects_.find(key); held != objects_.end()) {
      change.current = held->second;
    } else if (auto last = deleted_.find(key); last != deleted_.end()) {
      change.last = last->second.second;
    }
    out.changes.push_back(std::move(change));
  }
  std::reverse(out.changes.begin(), out.changes.end());
  return out;
}

uint64_t Cache::Notifications(const std::set<std::string>& kinds) const {
  std::lock_guard notify(notify_mutex_);
  uint64_t sum = 0;
  for (const std::string& kind : kinds) {
    if (auto it = notified_.find(kind); it != notified_.end()) sum += it->second;
  }
  return sum;
}

uint64_t Cache::WaitForNotification(const std::set<std::string>& kinds, uint64_t seen,
                                    std::chrono::steady_clock::time_point deadline) {
  std::unique_lock notify(notify_mutex_);
  auto count = [&] {
    uint64_t sum = 0;
    for (const std::string& kind : kinds) {
      if (auto it = notified_.find(kind); it != notified_.end()) sum += it->second;
    }
    return sum;
  };
  notified_changed_.wait_until(notify, deadline, [&] { return interrupted_ || count() > seen; });
  return count();
}

void Cache::Interrupt() {
  {
    std::lock_guard notify(notify_mutex_);
    interrupted_ = true;
  }
  notified_changed_.notify_all();
}

}  // namespace strata::cluster
