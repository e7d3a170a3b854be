#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <vector>

#include "store/store.h"
#include "store/watch_hub.h"

namespace strata::store {

// What a durable backend holds: the objects, the kept history and the two version marks.
struct PersistedState {
  std::vector<Object> objects;
  std::vector<Change> history;  // in version order
  int64_t current_version = 0;
  // Every change up to this version has been dropped from the history.
  int64_t compacted_version = 0;
};

// The durable half of a backend (SQLite today). Used by one VersionedStore, which serialises
// every call, so implementations need not be thread-safe.
class Persistence {
 public:
  virtual ~Persistence() = default;
  // Reads everything back, once, when the store opens.
  virtual Result<PersistedState> Load() = 0;
  // Makes `changes` (consecutive versions after the last commit) durable as one atomic
  // transaction and drops the history up to `compacted_version`. On failure nothing of it is
  // kept and an Internal error says why.
  virtual Status Commit(const std::vector<Change>& changes, int64_t compacted_version) = 0;
};

// The Store both backends share: objects indexed in memory, a bounded history, the watch hub,
// and the write rules (preconditions, batches, version stamping), over an optional Persistence
// that every write commits to before it is applied and acknowledged. Without one it is the
// memory backend. Thread-safe: reads share a lock, writes take it exclusively; concurrent
// Applies are committed in groups (one transaction, one fsync), each still whole or not at all.
class VersionedStore final : public Store {
 public:
  // Loads `persistence` (if any) and returns the store over it.
  static Result<std::unique_ptr<Store>> Open(const StoreOptions& options,
                                             std::unique_ptr<Persistence> persistence);
  ~VersionedStore() override;

  Result<std::vector<Object>> Apply(std::vector<Write> writes) override;
  Result<Object> Get(const ObjectKey& key) const override;
  Result<ListResult> List(const Selection& selection) const override;
  Result<std::unique_ptr<Watcher>> Watch(const WatchOptions& options) override;
  int64_t CurrentVersion() const override;

 private:
  // The latest change of each object a batch has touched so far.
  using Staged = std::map<ObjectKey, const Change*>;

  // One caller's Apply, queued to be committed together with concurrent ones.
  struct QueuedApply {
    std::vector<Write> writes;
    Result<std::vector<Object>> result;
    bool done = false;  // guarded by queue_mutex_
  };

  VersionedStore(const StoreOptions& options, std::unique_ptr<Persistence> persistence);

  // Plans, commits and applies the Applies of `group` in one transaction, each one whole or not
  // at all, and sets their results. Takes the store's lock.
  void CommitGroup(const std::vector<QueuedApply*>& group, WatchHub::PendingNotifications* pending);
  // Appends the changes of `apply` to `changes`, or returns why it cannot be applied (leaving
  // them to be dropped by the caller).
  Status PlanApply(QueuedApply* apply, std::vector<Change>* changes, Staged* staged);
  // Turns one write into a change at `version`, given the current state (nullptr if absent).
  Result<Change> PlanWrite(Write write, const Object* current, int64_t version);
  // Creates a change; the object gets a fresh uid and the clock's time.
  Change PlanCreate(Object requested, int64_t version);
  // The object at `key` as the batch so far leaves it; nullptr when there is none.
  const Object* Lookup(const ObjectKey& key, const Staged& staged) const;
  std::string NewUid();
  // Appends to the kept history, dropping the oldest changes beyond the limit.
  void Remember(Change change);

  const StoreOptions options_;
  const std::unique_ptr<Persistence> persistence_;
  const std::shared_ptr<WatchHub> hub_ = std::make_shared<WatchHub>();

  // Applies waiting for the next group commit; committing_ is true while one is under way.
  std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::vector<QueuedApply*> queue_;
  bool committing_ = false;

  mutable std::shared_mutex mutex_;
  std::map<ObjectKey, Object> objects_;
  std::deque<Change> history_;
  int64_t current_version_ = 0;
  int64_t compacted_version_ = 0;
  std::mt19937_64 uid_random_;
};

}  // namespace strata::store
