#include "store/versioned_store.h"

#include <algorithm>
#include <cstdio>
#include <mutex>

namespace strata::store {
namespace {

Status CheckPreconditions(const Object& requested, const Object& current) {
  if (requested.resource_version != 0 && requested.resource_version != current.resource_version) {
    return ConflictError(current.key.Describe() + " has resourceVersion " +
                         std::to_string(current.resource_version) + ", not " +
                         std::to_string(requested.resource_version) +
                         ": the object has been modified; read it again and retry");
  }
  if (!requested.uid.empty() && requested.uid != current.uid) {
    return ConflictError(current.key.Describe() + " has uid " + current.uid + ", not " +
                         requested.uid + ": it was deleted and created again");
  }
  return Status::Ok();
}

// Names the failing write of a batch: "writes[2]: ...".
Status AtWrite(size_t index, size_t count, const Status& status) {
  return count == 1 ? status : status.WithPrefix("writes[" + std::to_string(index) + "]");
}

}  // namespace

Result<std::unique_ptr<Store>> VersionedStore::Open(const StoreOptions& options,
                                                    std::unique_ptr<Persistence> persistence) {
  std::unique_ptr<VersionedStore> store(new VersionedStore(options, std::move(persistence)));
  if (store->persistence_) {
    ASSIGN_OR_RETURN(PersistedState state, store->persistence_->Load());
    for (Object& object : state.objects) {
      ObjectKey key = object.key;
      store->objects_.emplace(std::move(key), std::move(object));
    }
    store->current_version_ = state.current_version;
    store->compacted_version_ = state.compacted_version;
    for (Change& change : state.history) store->Remember(std::move(change));
  }
  return std::unique_ptr<Store>(std::move(store));
}

VersionedStore::VersionedStore(const StoreOptions& options,
                               std::unique_ptr<Persistence> persistence)
    : options_(options),
      persistence_(std::move(persistence)),
      uid_random_(std::random_device{}()) {}

VersionedStore::~VersionedStore() { hub_->Close(); }

Result<std::vector<Object>> VersionedStore::Apply(std::vector<Write> writes) {
  for (size_t i = 0; i < writes.size(); ++i) {
    if (Status s = ValidateObject(writes[i].object); !s.ok()) {
      return Err(AtWrite(i, writes.size(), s));
    }
  }
  if (writes.empty()) return std::vector<Object>{};
  QueuedApply mine{std::move(writes), std::vector<Object>{}, false};
  WatchHub::PendingNotifications pending;
  {
    std::unique_lock queue_lock(queue_mutex_);
    queue_.push_back(&mine);
    // Group commit: one waiting caller commits every queued Apply as one transaction, so that
    // concurrent writers share a commit (and its fsync) instead of queueing for one each.
    while (!mine.done) {
      if (committing_) {
        queue_changed_.wait(queue_lock);
        continue;
      }
      committing_ = true;
      std::vector<QueuedApply*> group;
      group.swap(queue_);
      queue_lock.unlock();
      CommitGroup(group, &pending);
      queue_lock.lock();
      committing_ = false;
      for (QueuedApply* apply : group) apply->done = true;
      queue_changed_.notify_all();
    }
  }
  pending.Run();
  return std::move(mine.result);
}

void VersionedStore::CommitGroup(const std::vector<QueuedApply*>& group,
                                 WatchHub::PendingNotifications* pending) {
  size_t total_writes = 0;
  for (const QueuedApply* apply : group) total_writes += apply->writes.size();
  std::unique_lock lock(mutex_);
  std::vector<Change> changes;
  changes.reserve(total_writes);  // `staged` points into it
  Staged staged;
  struct Accepted {
    QueuedApply* apply;
    size_t begin, end;  // its changes
  };
  std::vector<Accepted> accepted;
  for (QueuedApply* apply : group) {
    size_t begin = changes.size();
    if (Status s = PlanApply(apply, &changes, &staged); !s.ok()) {
      // Drop what this Apply planned; the group's other Applies go on without it.
      changes.erase(changes.begin() + static_cast<ptrdiff_t>(begin), changes.end());
      staged.clear();
      for (const Change& change : changes) staged[change.event.object.key] = &change;
      apply->result = Err(std::move(s));
      continue;
    }
    accepted.push_back({apply, begin, changes.size()});
  }
  if (changes.empty()) return;
  int64_t new_version = current_version_ + static_cast<int64_t>(changes.size());
  int64_t history_limit = static_cast<int64_t>(options_.history_limit);
  int64_t new_compacted = std::max(compacted_version_, new_version - history_limit);
  if (persistence_) {
    if (Status s = persistence_->Commit(changes, new_compacted); !s.ok()) {
      for (const Accepted& a : accepted) a.apply->result = Err(s);
      return;
    }
  }
  current_version_ = new_version;
  hub_->Publish(changes, pending);
  for (const Accepted& a : accepted) {
    std::vector<Object>& results = *a.apply->result;
    for (size_t i = a.begin; i < a.end; ++i) results.push_back(changes[i].event.object);
  }
  for (Change& change : changes) {
    const Object& object = change.event.object;
    if (change.event.type == WatchEventType::kDeleted) {
      objects_.erase(object.key);
    } else {
      objects_.insert_or_assign(object.key, object);
    }
    Remember(std::move(change));
  }
}

Status VersionedStore::PlanApply(QueuedApply* apply, std::vector<Change>* changes, Staged* staged) {
  std::vector<Write>& writes = apply->writes;
  for (size_t i = 0; i < writes.size(); ++i) {
    const Object* current = Lookup(writes[i].object.key, *staged);
    int64_t version = current_version_ + 1 + static_cast<int64_t>(changes->size());
    Result<Change> change = PlanWrite(std::move(writes[i]), current, version);
    if (!change) return AtWrite(i, writes.size(), change.error());
    changes->push_back(std::move(*change));
    (*staged)[changes->back().event.object.key] = &changes->back();
  }
  return Status::Ok();
}

Result<Change> VersionedStore::PlanWrite(Write write, const Object* current, int64_t version) {
  Object& requested = write.object;
  switch (write.op) {
    case WriteOp::kCreate:
      if (current) return Err(AlreadyExistsError(requested.key.Describe() + " already exists"));
      return PlanCreate(std::move(requested), version);
    case WriteOp::kUpsert:
      if (current) break;
      if (requested.resource_version != 0) {
        return Err(ConflictError(requested.key.Describe() +
                                 " does not exist, but resourceVersion " +
                                 std::to_string(requested.resource_version) + " was required"));
      }
      return PlanCreate(std::move(requested), version);
    case WriteOp::kUpdate:
      break;
    case WriteOp::kDelete: {
      if (!current) return Err(NotFoundError(requested.key.Describe() + " not found"));
      RETURN_IF_ERROR(CheckPreconditions(requested, *current));
      Object deleted = *current;
      deleted.resource_version = version;
      StampMetadata(&deleted);
      return Change{{WatchEventType::kDeleted, std::move(deleted)}, std::nullopt};
    }
  }
  if (!current) return Err(NotFoundError(requested.key.Describe() + " not found"));
  RETURN_IF_ERROR(CheckPreconditions(requested, *current));
  Object updated = std::move(requested);
  updated.uid = current->uid;
  updated.creation_timestamp = current->creation_timestamp;
  updated.resource_version = version;
  StampMetadata(&updated);
  return Change{{WatchEventType::kModified, std::move(updated)}, current->labels};
}

Change VersionedStore::PlanCreate(Object requested, int64_t version) {
  Object created = std::move(requested);
  created.uid = NewUid();
  created.creation_timestamp = options_.clock->Now();
  created.resource_version = version;
  StampMetadata(&created);
  return Change{{WatchEventType::kAdded, std::move(created)}, std::nullopt};
}

const Object* VersionedStore::Lookup(const ObjectKey& key, const Staged& staged) const {
  if (auto it = staged.find(key); it != staged.end()) {
    const Change& change = *it->second;
    return change.event.type == WatchEventType::kDeleted ? nullptr : &change.event.object;
  }
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : &it->second;
}

// A random (version 4) UUID, as Kubernetes gives every object.
std::string VersionedStore::NewUid() {
  uint64_t high = uid_random_();
  uint64_t low = uid_random_();
  high = (high & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  low = (low & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  char text[37];
  std::snprintf(text, sizeof(text), "%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(high >> 32), static_cast<unsigned>((high >> 16) & 0xffff),
                static_cast<unsigned>(high & 0xffff), static_cast<unsigned>(low >> 48),
                static_cast<unsigned long long>(low & 0xffffffffffffULL));
  return text;
}

void VersionedStore::Remember(Change change) {
  history_.push_back(std::move(change));
  while (history_.size() > options_.history_limit) {
    compacted_version_ = history_.front().event.object.resource_version;
    history_.pop_front();
  }
}

Result<Object> VersionedStore::Get(const ObjectKey& key) const {
  std::shared_lock lock(mutex_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return Err(NotFoundError(key.Describe() + " not found"));
  return it->second;
}

Result<ListResult> VersionedStore::List(const Selection& selection) const {
  if (selection.kind.empty()) return Err(InvalidArgumentError("list: kind must not be empty"));
  std::shared_lock lock(mutex_);
  ListResult result;
  result.resource_version = current_version_;
  ObjectKey start{selection.kind, selection.namespace_name.value_or(""), ""};
  for (auto it = objects_.lower_bound(start); it != objects_.end(); ++it) {
    const ObjectKey& key = it->first;
    if (key.kind != selection.kind) break;
    if (selection.namespace_name && key.namespace_name != *selection.namespace_name) break;
    if (selection.labels.Matches(it->second.labels)) result.items.push_back(it->second);
  }
  return result;
}

Result<std::unique_ptr<Watcher>> VersionedStore::Watch(const WatchOptions& options) {
  std::shared_lock lock(mutex_);
  int64_t from = options.from_version.value_or(current_version_);
  if (from < 0) {
    return Err(InvalidArgumentError("resourceVersion " + std::to_string(from) + " is negative"));
  }
  if (from > current_version_) {
    return Err(InvalidArgumentError("resourceVersion " + std::to_string(from) +
                                    " is newer than the store's current version " +
                                    std::to_string(current_version_)));
  }
  if (from < compacted_version_) {
    return Err(ExpiredError("resourceVersion " + std::to_string(from) +
                            " is too old: changes up to " + std::to_string(compacted_version_) +
                            " are no longer kept; list again and watch from the list's version"));
  }
  auto first = std::partition_point(history_.begin(), history_.end(), [&](const Change& change) {
    return change.event.object.resource_version <= from;
  });
  std::vector<const Change*> backlog;
  for (auto it = first; it != history_.end(); ++it) backlog.push_back(&*it);
  return hub_->Subscribe(options, backlog, current_version_);
}

int64_t VersionedStore::CurrentVersion() const {
  std::shared_lock lock(mutex_);
  return current_version_;
}

std::unique_ptr<Store> NewMemoryStore(const StoreOptions& options) {
  Result<std::unique_ptr<Store>> store = VersionedStore::Open(options, nullptr);
  return std::move(*store);
}

}  // namespace strata::store
