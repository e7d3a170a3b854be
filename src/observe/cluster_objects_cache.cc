#include "observe/cluster_objects_cache.h"

namespace strata::observe {

ClusterObjectsCache::ClusterObjectsCache(cluster::Cache& cache) : cache_(cache) {}

namespace {

std::unique_ptr<cluster::Cache> CacheOf(store::Store& store, size_t watch_buffer) {
  cluster::CacheOptions options;
  options.kinds = {"Node", "Pod", "Queue"};
  options.watch_buffer = watch_buffer;
  return std::make_unique<cluster::Cache>(store, std::move(options));
}

}  // namespace

ClusterObjectsCache::ClusterObjectsCache(store::Store& store, size_t watch_buffer)
    : owned_(CacheOf(store, watch_buffer)), cache_(*owned_) {}

Result<std::shared_ptr<const ClusterObjects>> ClusterObjectsCache::Get() {
  if (Status synced = cache_.Sync(); !synced.ok()) return Err(synced);
  std::lock_guard lock(mutex_);
  cluster::Changes changes = cache_.ChangesSince(cursor_, {"Node", "Pod", "Queue"});
  cursor_ = changes.cursor;
  if (changes.resync) {
    objects_.clear();
    cluster_.reset();
  }
  for (const cluster::Change& change : changes.changes) {
    cluster_.reset();
    if (!change.current) {
      objects_.erase(change.key);
      continue;
    }
    Converted converted;
    if (const api::Node* node = change.current->As<api::Node>()) {
      converted.node = std::make_shared<const api::Node>(*node);
    } else if (const api::Pod* pod = change.current->As<api::Pod>()) {
      converted.pod = std::make_shared<const StoredPod>(
          StoredPod{*pod, change.current->raw.creation_timestamp});
    } else if (const api::Queue* queue = change.current->As<api::Queue>()) {
      converted.queue = *queue;
    }
    objects_[change.key] = std::move(converted);
  }
  if (cluster_ != nullptr) return cluster_;
  auto cluster = std::make_shared<ClusterObjects>();
  for (const auto& [key, converted] : objects_) {
    if (converted.node) {
      cluster->nodes.push_back(converted.node);
    } else if (converted.pod) {
      cluster->pods.push_back(converted.pod);
    } else if (converted.queue) {
      cluster->queue_objects.push_back(*converted.queue);
    } else {
      ++cluster->undecodable;
    }
  }
  cluster->queues = api::QueueNames(cluster->queue_objects);
  cluster_ = std::move(cluster);
  return cluster_;
}

}  // namespace strata::observe
