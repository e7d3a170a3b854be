#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "cluster/stored_object.h"
#include "common/clock.h"
#include "common/status.h"
#include "store/store.h"

namespace strata::cluster {

// One object as the cache holds it: the stored form and, when its body decodes, the native
// value. Immutable once in the cache; shared by every reader.
struct CachedObject {
  store::Object raw;
  std::optional<api::Object> object;  // nullopt: the stored body does not decode
  Status error;                       // why it does not decode

  template <typename T>
  const T* As() const {
    return object ? object->As<T>() : nullptr;
  }
};
using ObjectRef = std::shared_ptr<const CachedObject>;

// The cached object as a Stored<T> (a copy, for a loop that edits and writes it back); nullopt
// when it is null, does not decode or is not a T.
template <typename T>
std::optional<Stored<T>> StoredOf(const ObjectRef& ref) {
  const T* value = ref ? ref->As<T>() : nullptr;
  if (value == nullptr) return std::nullopt;
  return Stored<T>{ref->raw, *value};
}

// The decodable T among `refs`, as Stored<T>, in order.
template <typename T>
std::vector<Stored<T>> StoredOf(const std::vector<ObjectRef>& refs) {
  std::vector<Stored<T>> out;
  out.reserve(refs.size());
  for (const ObjectRef& ref : refs) {
    if (std::optional<Stored<T>> stored = StoredOf<T>(ref)) out.push_back(std::move(*stored));
  }
  return out;
}

// The values under which an index lists an object ("the pods of node n": the pod's node name).
using IndexFunction = std::function<std::vector<std::string>(const CachedObject&)>;

struct IndexSpec {
  std::string name;  // "pods-by-node"
  std::string kind;  // the kind it indexes
  IndexFunction values;
};

struct CacheOptions {
  // The kinds listed and followed; the cache knows nothing of the others.
  std::vector<std::string> kinds;
  std::vector<IndexSpec> indexes;
  // store::WatchOptions::buffer_limit of each kind's watch: more changes than this waiting
  // between two Syncs expire the watch, and that kind is listed again.
  size_t watch_buffer = 100000;
  // How many changes the log keeps for ChangesSince; an older cursor gets a resync.
  size_t change_log_limit = 200000;
};

// One changed object, as ChangesSince reports it: its key, its state now (null when it was
// deleted) and, when deleted, its last state.
struct Change {
  store::ObjectKey key;
  ObjectRef current;
  ObjectRef last;  // set when current is null
};

// What changed since a cursor.
struct Changes {
  // The cursor was 0 or older than the log: `changes` holds every object of the kinds asked
  // for, and a consumer forgets what it knew of the others. (A kind listed again after its watch
  // expired is no resync: the differences the list brought are logged like any change.)
  bool resync = false;
  // Each changed key once, in the order of its latest change.
  std::vector<Change> changes;
  // The cursor to ask from next time.
  uint64_t cursor = 0;
};

// One watch-fed cache of decoded objects for a whole process (an informer, client-go's
// shared informer idea): each kind is listed once, then followed through its own watch, and
// listed again when its watch expires (the store dropped changes the cache had not read). Every
// change is applied once, decoded once and logged, so a control loop asks "what changed since
// my cursor" and pays for the changes, not for the size of the cluster. Reads hand out shared
// immutable objects, never copies of their bodies.
//
// Up to date: Sync applies every change the store had reported before the call, so a loop that
// Syncs at the start of its pass sees its own earlier writes (read-your-writes within the
// process).
//
// Owned by the control plane (one per process); `store` must outlive it. Thread-safe: Sync and
// the reads may run on many threads at once.
class Cache {
 public:
  Cache(store::Store& store, CacheOptions options);
  ~Cache();

  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  // Lists each kind the first time (and after its watch expired), then applies every change
  // waiting in the watches. On a failed list, returns the store's error; what was applied stays,
  // and the next Sync lists again.
  Status Sync();

  // The object at `key`, or null. Reads what the last Sync applied.
  ObjectRef Get(const store::ObjectKey& key) const;
  // Every object of `kind`, in key order.
  std::vector<ObjectRef> List(std::string_view kind) const;
  // The objects that index `index` lists under `value`, in key order. REQUIRES: `index` was
  // named in the options.
  std::vector<ObjectRef> Indexed(std::string_view index, std::string_view value) const;
  // How many objects of `kind` are held.
  size_t Count(std::string_view kind) const;

  // The changes of `kinds` since `cursor` (0: everything, as a resync). Costs the number of
  // changes since the cursor, whatever the size of the cache.
  Changes ChangesSince(uint64_t cursor, const std::set<std::string>& kinds) const;

  // A count that grows whenever a watch of `kinds` has news for the next Sync.
  uint64_t Notifications(const std::set<std::string>& kinds) const;
  // Waits until Notifications(kinds) exceeds `seen` or `deadline` (steady clock) passes, or
  // Interrupt is called. Returns the count then.
  uint64_t WaitForNotification(const std::set<std::string>& kinds, uint64_t seen,
                               std::chrono::steady_clock::time_point deadline);
  // Ends every wait now and every later one at once (the process is stopping).
  void Interrupt();

  // How many times a kind was listed (the first lists included).
  int64_t lists() const { return lists_.load(std::memory_order_relaxed); }

 private:
  struct KindState;
  struct Index;

  Status ListKindLocked(KindState& kind);
  void ApplyLocked(store::WatchEventType type, store::Object object);
  void PutLocked(ObjectRef ref);
  void RemoveLocked(const store::ObjectKey& key);
  void LogLocked(const store::ObjectKey& key);
  void IndexLocked(const CachedObject& object, bool add);

  store::Store& store_;
  const CacheOptions options_;

  std::mutex sync_mutex_;  // one Sync at a time; guards the watches in kinds_
  std::map<std::string, std::unique_ptr<KindState>, std::less<>> kinds_;

  mutable std::shared_mutex state_mutex_;  // guards the members below up to lists_
  std::map<store::ObjectKey, ObjectRef> objects_;
  std::map<std::string, std::unique_ptr<Index>, std::less<>> indexes_;
  // The change log: (sequence, key), oldest first. A key's latest entry is the one that counts.
  std::deque<std::pair<uint64_t, store::ObjectKey>> log_;
  uint64_t sequence_ = 0;  // of the latest change
  // The last states of deletions still in the log, with the deletion's sequence.
  std::map<store::ObjectKey, std::pair<uint64_t, ObjectRef>> deleted_;

  std::atomic<int64_t> lists_ = 0;

  mutable std::mutex notify_mutex_;  // guards notified_ and interrupted_
  std::condition_variable notified_changed_;
  std::map<std::string, uint64_t, std::less<>> notified_;
  bool interrupted_ = false;
};

}  // namespace strata::cluster
