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
    nodes_.Clear();
    pods_.Clear();
    queues_.clear();
    cluster_queues_.reset();
    undecodable_.clear();
    cluster_.reset();
  }
  for (const cluster::Change& change : changes.changes) Apply(change);
  if (cluster_ != nullptr) return cluster_;
  auto cluster = std::make_shared<ClusterObjects>();
  cluster->nodes = nodes_.Build();
  cluster->pods = pods_.Build();
  if (cluster_queues_ == nullptr) {
    auto queues = std::make_shared<ClusterQueues>();
    for (const auto& [key, queue] : queues_) queues->objects.push_back(queue);
    queues->names = api::QueueNames(queues->objects);
    cluster_queues_ = std::move(queues);
  }
  cluster->queues = cluster_queues_;
  cluster->undecodable = static_cast<int>(undecodable_.size());
  cluster_ = std::move(cluster);
  return cluster_;
}

void ClusterObjectsCache::Apply(const cluster::Change& change) {
  cluster_.reset();
  const store::ObjectKey& key = change.key;
  const cluster::CachedObject* current = change.current.get();
  bool decoded = false;
  if (key.kind == "Node") {
    const api::Node* node = current ? current->As<api::Node>() : nullptr;
    decoded = node != nullptr;
    if (decoded) {
      // The cache's own decoded Node, shared (it is immutable) rather than copied.
      nodes_.Put(key, std::shared_ptr<const api::Node>(change.current, node));
    } else {
      nodes_.Erase(key);
    }
  } else if (key.kind == "Pod") {
    const api::Pod* pod = current ? current->As<api::Pod>() : nullptr;
    decoded = pod != nullptr;
    if (decoded) {
      pods_.Put(
          key, std::make_shared<const StoredPod>(StoredPod{*pod, current->raw.creation_timestamp}));
    } else {
      pods_.Erase(key);
    }
  } else {
    const api::Queue* queue = current ? current->As<api::Queue>() : nullptr;
    decoded = queue != nullptr;
    if (decoded) {
      queues_[key] = *queue;
    } else {
      queues_.erase(key);
    }
    cluster_queues_.reset();
  }
  if (current != nullptr && !decoded) {
    undecodable_.insert(key);
  } else {
    undecodable_.erase(key);
  }
}

}  // namespace strata::observe
