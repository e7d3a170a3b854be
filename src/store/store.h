#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "store/label_selector.h"
#include "store/object.h"

namespace strata::store {

// What happened to an object, as a watcher sees it (Kubernetes' watch event types).
enum class WatchEventType { kAdded, kModified, kDeleted };

// "ADDED", "MODIFIED", "DELETED".
std::string_view WatchEventTypeName(WatchEventType type);

// One change. `object.resource_version` is the version of the write; for kDeleted, `object` is
// the last state of the deleted object stamped with the version of the deletion.
struct WatchEvent {
  WatchEventType type;
  Object object;

  bool operator==(const WatchEvent&) const = default;
};

// Which objects a List or a Watch covers. An empty kind means every kind (Watch only);
// namespace_name nullopt means every namespace.
struct Selection {
  std::string kind;
  std::optional<std::string> namespace_name;
  LabelSelector labels;
};

// A consistent view: every object of the selection at `resource_version`. A Watch from that
// version misses nothing that happens after the List.
struct ListResult {
  std::vector<Object> items;
  int64_t resource_version = 0;
};

// One write of a batch (Store::Apply).
//   kCreate: the object must not exist (else AlreadyExists).
//   kUpdate: the object must exist (else NotFound); if object.resource_version is non-zero it
//            must equal the current version, and a non-empty uid must equal the current uid
//            (else Conflict). Zero means an unconditional update.
//   kUpsert: kCreate when the object does not exist (Conflict if a resource_version was given),
//            kUpdate otherwise.
//   kDelete: only object.key, and the optional resource_version / uid preconditions, are used.
enum class WriteOp { kCreate, kUpdate, kUpsert, kDelete };
struct Write {
  WriteOp op;
  Object object;
};

struct WatchOptions {
  // Kind, namespace and labels that the watcher wants; the default is everything.
  Selection selection;
  // Deliver every change with a version greater than this one. nullopt: changes from now on.
  // Older than the oldest kept change: Watch fails with Expired and the caller relists.
  std::optional<int64_t> from_version;
  // At most this many undelivered events; one more and the watcher expires (Next returns
  // Expired from then on) so a slow consumer never holds writers back.
  size_t buffer_limit = 1000;
};

// A stream of changes, in version order, for one consumer. Created by Store::Watch, owned by
// the consumer. Thread-safe: a consumer thread may block in Next while writers add events.
class Watcher {
 public:
  virtual ~Watcher() = default;

  // Returns the next event, waiting up to `timeout` of real time for one. Returns
  // DeadlineExceeded when none arrived; Expired, for good, once the buffer overflowed (what was
  // buffered is dropped: the consumer relists); Cancelled, for good, once the store is gone
  // (after the events buffered before it).
  virtual Result<WatchEvent> Next(Duration timeout) = 0;

  // Non-blocking Next: nullopt when no event is waiting; the same errors as Next otherwise.
  virtual Result<std::optional<WatchEvent>> TryNext() = 0;

  // Registers `notify`, invoked (from a writer's thread, after the store's locks are released)
  // whenever events or an error become available, and once right away if some already are. It
  // should be cheap, as writers wait for it: an event loop posts a drain of TryNext to itself.
  // It must not call SetNotify or destroy this watcher. Replaces any earlier callback; an empty
  // function removes it, and once SetNotify returns the old callback is never called again.
  virtual void SetNotify(std::function<void()> notify) = 0;

  // The bookmark: every matching change with a version up to this one has been returned by
  // Next/TryNext. A watcher that saw nothing still advances, so it can resume from here.
  virtual int64_t ProgressVersion() const = 0;
};

// Versioned objects with watch: the state of a strata control plane. One global resource
// version (int64) counts every write across all kinds, like etcd's revision; every write gets
// the next version, and a batch gets consecutive ones. Implementations are thread-safe: many
// threads may read, write and watch at once. Errors are Status codes, never exceptions:
// InvalidArgument (bad object, naming the field), NotFound, AlreadyExists, Conflict (a failed
// precondition on resource version or uid), Expired (history no longer kept), Internal (the
// storage failed; nothing was changed).
class Store {
 public:
  virtual ~Store() = default;

  // Stores a new object with a fresh uid and creation time; returns it as stored.
  Result<Object> Create(Object object);
  // Replaces an object (see WriteOp::kUpdate for the preconditions); returns it as stored.
  Result<Object> Update(Object object);
  // Removes the object at `key`. If `precondition_version` is non-zero it must equal the current
  // version (else Conflict). Returns the deleted object stamped with the deletion's version.
  Result<Object> Delete(const ObjectKey& key, int64_t precondition_version = 0);

  // Applies every write or none: on the first failing write, returns its error (prefixed with
  // "writes[i]: " when there are several writes) and leaves the store unchanged. Later writes see
  // earlier ones of the batch. Returns the resulting objects in order (for kDelete, the deleted
  // object).
  virtual Result<std::vector<Object>> Apply(std::vector<Write> writes) = 0;

  // Returns the object at `key`, or NotFound.
  virtual Result<Object> Get(const ObjectKey& key) const = 0;

  // REQUIRES: selection.kind is not empty (else InvalidArgument). Items are ordered by
  // namespace, then name.
  virtual Result<ListResult> List(const Selection& selection) const = 0;

  // Starts a watch; see WatchOptions. Returns Expired if options.from_version is older than
  // the oldest kept change, InvalidArgument if it is negative or newer than CurrentVersion().
  virtual Result<std::unique_ptr<Watcher>> Watch(const WatchOptions& options) = 0;

  // The version of the latest write (0 for a store never written).
  virtual int64_t CurrentVersion() const = 0;
};

// Tuning shared by both backends.
struct StoreOptions {
  // Stamps creation timestamps. Must outlive the store.
  const Clock* clock = &RealClock::Instance();
  // How many of the latest changes are kept for Watch(from_version).
  size_t history_limit = 10000;
};

// A store that lives in this process only (simulation, tests).
std::unique_ptr<Store> NewMemoryStore(const StoreOptions& options);

}  // namespace strata::store
