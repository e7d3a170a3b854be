#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "kube/client.h"
#include "kube/resource.h"
#include "kube/watch.h"

namespace strata::kube {

struct ReflectorOptions {
  std::string namespace_name;  // "" for every namespace, or a cluster-scoped resource
  std::string label_selector;
  std::string field_selector;
  int64_t page_size = 500;  // the list is read in pages of this many items
  // Each watch asks the server to end it after a random time in [min, 2 * min), as client-go,
  // so that many watchers do not reconnect at once.
  Duration min_watch_timeout = std::chrono::minutes(5);
  // When set, the first watch starts from this version without a list first (a consumer that
  // kept its state); if the version is too old the reflector lists as usual.
  std::string resume_resource_version;
  // Waits after a failed list or watch: doubling from initial_backoff up to max_backoff.
  Duration initial_backoff = std::chrono::milliseconds(800);
  Duration max_backoff = std::chrono::seconds(30);
};

// What the consumer applies to its copy of the resource.
enum class DeltaType {
  kReplace,  // `items` is the complete state: objects of the old copy absent from it are gone
  kAdded,
  kModified,
  kDeleted,   // `object` is the last state of the deleted object
  kBookmark,  // nothing changed up to resource_version
};

// "Replace", "Added", "Modified", "Deleted", "Bookmark".
std::string_view DeltaTypeName(DeltaType type);

struct Delta {
  DeltaType type;
  std::vector<nlohmann::json> items;  // kReplace only
  nlohmann::json object;              // every other type
  std::string resource_version;       // the version the consumer is at once it applied this
};

// Keeps a consumer's copy of one resource current, as client-go's Reflector: lists (in pages,
// at a consistent version), then watches from the list's resourceVersion with bookmarks; each
// bookmark advances the version; a watch that ends (its timeout, a server restart) is reopened
// from the last version seen; a 410 Gone — an HTTP answer or an ERROR event with code 410 —
// means the version is no longer available, and the reflector lists again and delivers a
// kReplace. Failures back off exponentially.
//
// A pull interface, like store::Watcher: the consumer calls Next in its own loop. Owned by the
// consumer; Next is called from one thread at a time; Stop, resource_version and stats from
// any. The client must outlive it.
class Reflector {
 public:
  Reflector(Client* client, GroupVersionResource resource, ReflectorOptions options = {});
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Returns the next delta, waiting up to `timeout` for one (a list or a watch request in
  // progress may take longer). The first delta is a kReplace (unless resuming). Errors:
  // DeadlineExceeded when nothing happened in time; Cancelled, for good, after Stop; and a
  // failure that retrying will not cure — PermissionDenied, Unauthenticated, NotFound (no
  // such resource), InvalidArgument (a bad selector) — after which the next call tries again
  // (after the backoff). Transient failures are retried inside, with backoff.
  Result<Delta> Next(Duration timeout);

  // Makes Next return Cancelled, interrupting a watch in progress. Thread-safe.
  void Stop();

  // The version of the last delta returned ("" before the first).
  std::string resource_version() const;

  struct Stats {
    uint64_t lists = 0;    // complete lists (each a kReplace)
    uint64_t watches = 0;  // watch requests opened
    uint64_t expired = 0;  // 410s that forced a relist
    uint64_t failures = 0;
  };
  Stats stats() const;

 private:
  // Waits until `until` or Stop; false when stopped.
  bool WaitUntil(std::chrono::steady_clock::time_point until);
  void BackOff();
  bool Stopped() const;

  Client* const client_;
  const GroupVersionResource resource_;
  const ReflectorOptions options_;
  std::mt19937_64 random_;

  // The consumer's thread's state.
  bool need_list_;
  std::unique_ptr<WatchStream> stream_;
  Duration backoff_ = Duration::zero();
  std::chrono::steady_clock::time_point retry_at_{};
  std::chrono::steady_clock::time_point stream_deadline_{};  // a watchdog on a silent stream

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopped_ = false;          // guarded by mutex_
  std::string resource_version_;  // guarded by mutex_
  Stats stats_;                   // guarded by mutex_
};

}  // namespace strata::kube
