#pragma once

#include <cstddef>
#include <memory>

#include "common/status.h"
#include "store/store.h"
#include "telemetry/cluster_gpus.h"
#include "telemetry/store_follower.h"

namespace strata::telemetry {

// Every Node, Pod and Queue of the store, decoded (an object that does not decode is counted in
// `undecodable` and left out, so one bad object never hides the rest) and kept current from the
// store's watch, for readers that want the cluster at each scrape or pass without listing and
// decoding everything each time: the first Get lists them once, and from then on a StoreFollower's
// thread collects the objects written as the changes come, and the next Get decodes those alone
// (each once, however often it was written). A Get hands out one shared, immutable ClusterObjects,
// rebuilt (pointers to the decoded objects, no copies of them) only when something changed since
// the last one.
//
// Shared by the cluster's readers (one per control plane); `store` must outlive it.
// Thread-safe.
class ClusterObjectsCache {
 public:
  // How many store changes may wait for the follower before its watch expires and the next Get
  // lists the store again (large enough that a big batch of manifests forces no relist).
  static constexpr size_t kDefaultWatchBuffer = 100000;

  explicit ClusterObjectsCache(store::Store& store, size_t watch_buffer = kDefaultWatchBuffer);
  ~ClusterObjectsCache();

  ClusterObjectsCache(const ClusterObjectsCache&) = delete;
  ClusterObjectsCache& operator=(const ClusterObjectsCache&) = delete;

  // The cluster as a fresh list of the store would decode it now (nodes, then pods, in the
  // store's list order): up to date with each write that completed before the call. Calls with no
  // write between them return the same object. On a failed list of the store, returns its error;
  // the next call lists again.
  Result<std::shared_ptr<const ClusterObjects>> Get();

  // How many times the store was listed: the first Get's list, and one each time the watch fell
  // behind.
  int64_t relists() const;

 private:
  class DecodedObjects;

  std::unique_ptr<DecodedObjects> objects_;
  StoreFollower follower_;
};

}  // namespace strata::telemetry
