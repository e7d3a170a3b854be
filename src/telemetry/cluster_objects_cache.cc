#include "telemetry/cluster_objects_cache.h"

#include <atomic>
#include <map>
#include <optional>
#include <vector>

namespace strata::telemetry {

// The Nodes, Pods and Queues by key, in the store's list order (kind, then namespace, then
// name: Nodes before Pods): those written since the last Cluster() as stored, the others
// decoded, and the last ClusterObjects built from them. Decoding waits for a reader, so an object
// written many times between two reads is decoded once, and a cache nobody reads decodes
// nothing. Guarded by the follower's lock.
class ClusterObjectsCache::DecodedObjects final : public FollowedObjects {
 public:
  void Clear() override {
    written_.clear();
    nodes_and_pods_.clear();
    queues_.clear();
    cluster_.reset();
  }

  void Put(store::Object object) override {
    cluster_.reset();
    store::ObjectKey key = object.key;
    written_[std::move(key)] = std::move(object);
  }

  void Remove(const store::Object& object) override {
    cluster_.reset();
    written_.erase(object.key);
    nodes_and_pods_.erase(object.key);
    queues_.erase(object.key);
  }

  void Relisted() override { relists_.fetch_add(1, std::memory_order_relaxed); }

  // The cluster in the store's list order, built again only after a change.
  std::shared_ptr<const ClusterObjects> Cluster() {
    if (cluster_ != nullptr) return cluster_;
    DecodeWritten();
    auto cluster = std::make_shared<ClusterObjects>();
    for (const auto& [key, queue] : queues_) {
      if (queue) {
        cluster->queue_objects.push_back(*queue);
      } else {
        ++cluster->undecodable;
      }
    }
    cluster->queues = api::QueueNames(cluster->queue_objects);
    cluster->nodes.reserve(nodes_and_pods_.size());
    cluster->pods.reserve(nodes_and_pods_.size());
    for (const auto& [key, decoded] : nodes_and_pods_) {
      cluster->nodes.insert(cluster->nodes.end(), decoded.nodes.begin(), decoded.nodes.end());
      cluster->pods.insert(cluster->pods.end(), decoded.pods.begin(), decoded.pods.end());
      cluster->undecodable += decoded.undecodable;
    }
    cluster_ = std::move(cluster);
    return cluster_;
  }

  int64_t relists() const { return relists_.load(std::memory_order_relaxed); }

 private:
  void DecodeWritten() {
    for (const auto& [key, object] : written_) {
      if (key.kind == "Queue") {
        queues_[key] = DecodeStoredQueue(object);
        continue;
      }
      ClusterObjects decoded;
      AddStoredObject(object, decoded);
      nodes_and_pods_[key] = std::move(decoded);
    }
    written_.clear();
  }

  // Written since the last Cluster(), not decoded yet.
  std::map<store::ObjectKey, store::Object> written_;
  // Each Node or Pod as AddStoredObject decodes it: one node, one pod, or one undecodable.
  std::map<store::ObjectKey, ClusterObjects> nodes_and_pods_;
  // Each Queue, nullopt when it did not decode.
  std::map<store::ObjectKey, std::optional<api::Queue>> queues_;
  std::shared_ptr<const ClusterObjects> cluster_;
  std::atomic<int64_t> relists_ = 0;
};

ClusterObjectsCache::ClusterObjectsCache(store::Store& store, size_t watch_buffer)
    : objects_(std::make_unique<DecodedObjects>()),
      follower_(store, {"Node", "Pod", "Queue"}, watch_buffer, *objects_) {}

ClusterObjectsCache::~ClusterObjectsCache() = default;

Result<std::shared_ptr<const ClusterObjects>> ClusterObjectsCache::Get() {
  std::shared_ptr<const ClusterObjects> cluster;
  if (Status read = follower_.Read([&] { cluster = objects_->Cluster(); }); !read.ok()) {
    return Err(read);
  }
  return cluster;
}

int64_t ClusterObjectsCache::relists() const { return objects_->relists(); }

}  // namespace strata::telemetry
