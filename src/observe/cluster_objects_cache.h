#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "cluster/cache.h"
#include "common/status.h"
#include "observe/cluster_gpus.h"
#include "observe/shared_chunks.h"

namespace strata::observe {

// Every Node, Pod and Queue of the control plane's cache, as the GPU and cost readers want
// them (ClusterObjects: shared immutable nodes and pods, the queue names; an object that does
// not decode is counted in `undecodable` and left out, so one bad object never hides the rest),
// kept current from the cache's change log: a Get after a write converts only the objects
// written since the last Get, and hands out one shared ClusterObjects, made anew only when
// something changed, and then from the chunks of the previous one (SharedChunks): only the
// chunks that hold a written node or pod are copied (pointers to the converted objects, never
// the objects), so a Get after one change costs about the same at 1,000 and 10,000 pods. The
// Queues and their names are shared as they are until a Queue changes.
//
// Shared by the cluster's readers (one per control plane); `cache` (following Node, Pod and
// Queue) must outlive it. Thread-safe.
class ClusterObjectsCache {
 public:
  explicit ClusterObjectsCache(cluster::Cache& cache);
  // Over a cache of its own of `store`'s Nodes, Pods and Queues (for a reader with no control
  // plane around it: a test, a benchmark). `store` must outlive it.
  explicit ClusterObjectsCache(store::Store& store, size_t watch_buffer = 100000);

  ClusterObjectsCache(const ClusterObjectsCache&) = delete;
  ClusterObjectsCache& operator=(const ClusterObjectsCache&) = delete;

  // The cluster as the cache holds it after a Sync: up to date with each write that completed
  // before the call (nodes, then pods, in key order). Calls with no write between them return
  // the same object. On a failed Sync, returns its error; the next call tries again.
  Result<std::shared_ptr<const ClusterObjects>> Get();

  // How many times the cache underneath listed a kind (cluster::Cache::lists).
  int64_t lists() const { return cache_.lists(); }

 private:
  // Brings the members below up to date with one change. REQUIRES: mutex_ held.
  void Apply(const cluster::Change& change);

  std::unique_ptr<cluster::Cache> owned_;  // set by the store constructor
  cluster::Cache& cache_;
  std::mutex mutex_;  // guards the members below
  uint64_t cursor_ = 0;
  SharedChunksBuilder<store::ObjectKey, api::Node> nodes_;
  SharedChunksBuilder<store::ObjectKey, StoredPod> pods_;
  std::map<store::ObjectKey, api::Queue> queues_;
  std::shared_ptr<const ClusterQueues> cluster_queues_;  // null once a Queue changed
  std::set<store::ObjectKey> undecodable_;
  std::shared_ptr<const ClusterObjects> cluster_;  // null once something changed
};

}  // namespace strata::observe
