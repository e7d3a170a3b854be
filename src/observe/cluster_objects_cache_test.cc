#include "observe/cluster_objects_cache.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "api/encode.h"
#include "observe/cluster_cost.h"
#include "observe/test_cluster.h"

namespace strata::observe {
namespace {

using testing::BoundPod;
using testing::GpuNode;

api::Queue ResearchQueue() {
  api::Queue queue;
  queue.metadata.name = "research-cq";
  queue.spec.local_queues = {{"default", "research"}};
  return queue;
}

// Everything a reader of `cluster` can see, as text: each node and pod as the API encodes it,
// each pod's creation time and queue label, the undecodable count, and the GPU and cost series.
std::string Describe(const ClusterObjects& cluster) {
  std::string text;
  for (const std::shared_ptr<const api::Node>& node : cluster.nodes) {
    text += api::EncodeObject(api::Object(*node)).dump() + "\n";
  }
  for (const std::shared_ptr<const StoredPod>& stored : cluster.pods) {
    text += api::EncodeObject(api::Object(stored->pod)).dump() + " created " +
            FormatRfc3339(stored->created) + " queue " +
            QueueLabelOf(stored->pod, cluster.queues->names) + "\n";
  }
  text += "undecodable " + std::to_string(cluster.undecodable) + "\n";
  RenderGpuMetrics(ClusterGpuSamples(cluster, {}), text, metrics::FamilySelection());
  std::vector<CostPod> costs = CostPodsOf(cluster);
  PriceAll(DefaultPriceTable(), costs);
  const TimePoint now = FakeClock::kDefaultStart + std::chrono::hours(24);
  std::vector<CostReport> reports;
  for (CostDimension dimension :
       {CostDimension::kTeam, CostDimension::kQueue, CostDimension::kJob}) {
    reports.push_back(ComputeCost(DefaultPriceTable().currency, costs, dimension,
                                  now - std::chrono::hours(48), now, {}));
  }
  RenderCostMetrics(reports, text, metrics::FamilySelection());
  return text;
}

// Checks that the cache, following the watch, gives what a fresh cache's first read (a list of
// the store) gives.
void ExpectSameAsLoad(ClusterObjectsCache& cache, store::Store& store) {
  Result<std::shared_ptr<const ClusterObjects>> cached = cache.Get();
  ASSERT_TRUE(cached) << cached.error().ToString();
  ClusterObjectsCache fresh(store);
  Result<std::shared_ptr<const ClusterObjects>> loaded = fresh.Get();
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_EQ(Describe(**cached), Describe(**loaded));
}

// Creates or replaces `object`.
void Upsert(store::Store& store, const api::Object& object) {
  ASSERT_TRUE(store.Apply({{store::WriteOp::kUpsert, testing::StoredObject(object)}}));
}

// An object no decoder accepts, stored under `kind`.
void PutBroken(store::Store& store, const std::string& kind, const std::string& name) {
  store::Object object;
  object.key = {kind, kind == "Pod" ? "default" : "", name};
  object.body = {{"kind", kind}, {"spec", 7}};
  ASSERT_TRUE(store.Create(std::move(object)));
}

TEST(ClusterObjectsCacheTest, FollowsCreatesUpdatesAndDeletesAsLoadReadsThem) {
  std::unique_ptr<store::Store> store = testing::SimulatedClusterStore(3);
  ClusterObjectsCache cache(*store);
  ExpectSameAsLoad(cache, *store);
  const int64_t first_lists = cache.lists();  // one per kind

  // Creates, including a Queue that renames the pods' queue label and objects that do not decode.
  testing::Put(*store, ResearchQueue());
  testing::Put(*store, GpuNode("sim-node-10", 4, false));
  testing::Put(*store, BoundPod("a-first", "sim-node-10", {0, 1}, "Running"));
  PutBroken(*store, "Pod", "broken");
  PutBroken(*store, "Queue", "broken-cq");
  ExpectSameAsLoad(cache, *store);

  // Updates: a pod finishes, a node loses a GPU.
  api::Pod finished = BoundPod("a-first", "sim-node-10", {0, 1}, "Succeeded");
  finished.metadata.annotations[api::kFinishedAtAnnotation] = "2026-01-01T00:00:00Z";
  Upsert(*store, finished);
  Upsert(*store, GpuNode("sim-node-10", 3, false));
  ExpectSameAsLoad(cache, *store);

  // Deletes, of each kind.
  ASSERT_TRUE(store->Delete({"Node", "", "sim-node-1"}));
  ASSERT_TRUE(store->Delete({"Pod", "default", "train-0"}));
  ASSERT_TRUE(store->Delete({"Pod", "default", "broken"}));
  ASSERT_TRUE(store->Delete({"Queue", "", "research-cq"}));
  ExpectSameAsLoad(cache, *store);
  EXPECT_EQ(cache.lists(), first_lists);  // every change came by the watch
}

// The items of `chunks`, in order.
template <typename T>
std::vector<std::shared_ptr<const T>> Items(const SharedChunks<T>& chunks) {
  return {chunks.begin(), chunks.end()};
}

TEST(ClusterObjectsCacheTest, SharesWhatDidNotChange) {
  std::unique_ptr<store::Store> store = testing::SimulatedClusterStore(2);
  ClusterObjectsCache cache(*store);
  Result<std::shared_ptr<const ClusterObjects>> first = cache.Get();
  ASSERT_TRUE(first) << first.error().ToString();
  Result<std::shared_ptr<const ClusterObjects>> again = cache.Get();
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(first->get(), again->get());

  Upsert(*store, GpuNode("sim-node-1", 4, true));
  Result<std::shared_ptr<const ClusterObjects>> changed = cache.Get();
  ASSERT_TRUE(changed) << changed.error().ToString();
  ASSERT_NE(first->get(), changed->get());
  const auto first_nodes = Items((*first)->nodes);
  const auto changed_nodes = Items((*changed)->nodes);
  ASSERT_EQ(changed_nodes.size(), 2u);
  // The node written is decoded anew; the other one and every pod are the same objects.
  EXPECT_EQ(first_nodes[0].get(), changed_nodes[0].get());
  EXPECT_NE(first_nodes[1].get(), changed_nodes[1].get());
  EXPECT_EQ(changed_nodes[1]->status.gpus.size(), 4u);
  const auto first_pods = Items((*first)->pods);
  const auto changed_pods = Items((*changed)->pods);
  ASSERT_EQ(first_pods.size(), changed_pods.size());
  for (size_t i = 0; i < first_pods.size(); ++i) {
    EXPECT_EQ(first_pods[i].get(), changed_pods[i].get());
  }
  // The first result is as it was.
  EXPECT_EQ(first_nodes[1]->status.gpus.size(), 8u);
  // No Queue changed: the Queues and their names are the same object.
  EXPECT_EQ((*first)->queues.get(), (*changed)->queues.get());

  testing::Put(*store, ResearchQueue());
  Result<std::shared_ptr<const ClusterObjects>> queued = cache.Get();
  ASSERT_TRUE(queued) << queued.error().ToString();
  EXPECT_NE((*changed)->queues.get(), (*queued)->queues.get());
  ASSERT_EQ((*queued)->queues->objects.size(), 1u);
  EXPECT_EQ((*queued)->queues->objects[0].metadata.name, "research-cq");
  EXPECT_TRUE((*changed)->queues->objects.empty());
}

// How many of `after`'s pod chunks are not chunks of `before`.
size_t NewPodChunks(const ClusterObjects& before, const ClusterObjects& after) {
  size_t fresh = 0;
  for (const auto& chunk : after.pods.chunks()) {
    const auto& old = before.pods.chunks();
    if (std::find(old.begin(), old.end(), chunk) == old.end()) ++fresh;
  }
  return fresh;
}

// The pod `name` of `cluster`, or null.
std::shared_ptr<const StoredPod> FindPod(const ClusterObjects& cluster, const std::string& name) {
  for (const std::shared_ptr<const StoredPod>& stored : cluster.pods) {
    if (stored->pod.metadata.name == name) return stored;
  }
  return nullptr;
}

TEST(ClusterObjectsCacheTest, AGetAfterOnePodChangeCopiesOnlyTheChunkItFallsIn) {
  std::unique_ptr<store::Store> store = testing::SimulatedClusterStore(1);
  auto pod_name = [](int i) { return fmt::format("pod-{:04}", i); };
  for (int i = 0; i < 1000; ++i) {
    testing::Put(*store, BoundPod(pod_name(i), "sim-node-0", {i % 8}, "Running", 100));
  }
  ClusterObjectsCache cache(*store, /*watch_buffer=*/4);
  Result<std::shared_ptr<const ClusterObjects>> read = cache.Get();
  ASSERT_TRUE(read) << read.error().ToString();
  std::shared_ptr<const ClusterObjects> before = *read;
  ASSERT_GT(before->pods.chunks().size(), 4u);

  // Reads again after `write`, checks the result against a fresh load, and returns how many pod
  // chunks it does not share with the read before.
  auto new_chunks_after = [&](const std::function<void()>& write) {
    write();
    Result<std::shared_ptr<const ClusterObjects>> after = cache.Get();
    EXPECT_TRUE(after) << after.error().ToString();
    if (!after) return size_t{0};
    ExpectSameAsLoad(cache, *store);
    size_t fresh = NewPodChunks(*before, **after);
    before = *after;
    return fresh;
  };

  api::Pod measured = BoundPod(pod_name(500), "sim-node-0", {500 % 8}, "Running", 100);
  measured.metadata.annotations[api::kGpuActivityAnnotation] = "0.42";
  EXPECT_EQ(new_chunks_after([&] { Upsert(*store, measured); }), 1u);
  std::shared_ptr<const StoredPod> changed = FindPod(*before, pod_name(500));
  ASSERT_NE(changed, nullptr);
  EXPECT_EQ(changed->pod.metadata.annotations.at(api::kGpuActivityAnnotation), "0.42");

  EXPECT_LE(new_chunks_after([&] {
              ASSERT_TRUE(store->Delete({"Pod", "default", pod_name(100)}));
            }),
            1u);
  EXPECT_EQ(FindPod(*before, pod_name(100)), nullptr);
  EXPECT_EQ(before->pods.size(), 1002u);  // 999 here and SimulatedClusterStore's 3

  EXPECT_LE(
      new_chunks_after([&] { testing::Put(*store, BoundPod("pod-0700a", "", {}, "Pending")); }),
      2u);  // a chunk grown past its limit splits in two
  EXPECT_NE(FindPod(*before, "pod-0700a"), nullptr);

  // More writes in one batch than the watch holds: the cache lists the pods again, and what
  // the list did not change stays shared.
  const int64_t lists = cache.lists();
  EXPECT_LE(new_chunks_after([&] {
              std::vector<store::Write> writes;
              for (int i : {10, 11, 12, 13, 14}) {
                api::Pod done = BoundPod(pod_name(i), "sim-node-0", {i % 8}, "Succeeded", 100);
                writes.push_back({store::WriteOp::kUpsert, testing::StoredObject(done)});
              }
              ASSERT_TRUE(store->Apply(std::move(writes)));
            }),
            1u);
  EXPECT_EQ(cache.lists(), lists + 1);
  EXPECT_EQ(FindPod(*before, pod_name(12))->pod.status.phase, api::PodPhase::kSucceeded);
}

TEST(ClusterObjectsCacheTest, ListsAgainWhenItsWatchFellBehind) {
  std::unique_ptr<store::Store> store = testing::SimulatedClusterStore(2);
  ClusterObjectsCache cache(*store, /*watch_buffer=*/2);
  ExpectSameAsLoad(cache, *store);
  const int64_t lists = cache.lists();  // one per kind

  // One batch of more changes than the watch holds: the store expires the watch at once.
  std::vector<store::Write> writes;
  for (int i = 0; i < 4; ++i) {
    writes.push_back(
        {store::WriteOp::kCreate, testing::StoredObject(BoundPod("batch-" + std::to_string(i),
                                                                 "sim-node-1", {i}, "Running"))});
  }
  store::Object gone;
  gone.key = {"Node", "", "sim-node-0"};
  writes.push_back({store::WriteOp::kDelete, gone});
  ASSERT_TRUE(store->Apply(std::move(writes)));
  ExpectSameAsLoad(cache, *store);
  EXPECT_EQ(cache.lists(), lists + 1);  // the Pods, again

  // And follows the store from the new list on.
  ASSERT_TRUE(store->Delete({"Pod", "default", "batch-0"}));
  ExpectSameAsLoad(cache, *store);
}

}  // namespace
}  // namespace strata::observe
