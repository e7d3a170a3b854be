#include "observe/cluster_objects_cache.h"

#include <gtest/gtest.h>

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
            FormatRfc3339(stored->created) + " queue " + QueueLabelOf(stored->pod, cluster.queues) +
            "\n";
  }
  text += "undecodable " + std::to_string(cluster.undecodable) + "\n";
  RenderGpuMetrics(ClusterGpuSamples(cluster, {}), text, metrics::FamilySelection());
  const CostPods costs = CostPodsOf(cluster);
  text += "unknown end " + std::to_string(costs.unknown_end) + "\n";
  const TimePoint now = FakeClock::kDefaultStart + std::chrono::hours(24);
  std::vector<CostReport> reports;
  for (CostDimension dimension :
       {CostDimension::kTeam, CostDimension::kQueue, CostDimension::kJob}) {
    reports.push_back(ComputeCost(DefaultPriceTable(), costs.pods, dimension,
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
  ASSERT_EQ((*changed)->nodes.size(), 2u);
  // The node written is decoded anew; the other one and every pod are the same objects.
  EXPECT_EQ((*first)->nodes[0].get(), (*changed)->nodes[0].get());
  EXPECT_NE((*first)->nodes[1].get(), (*changed)->nodes[1].get());
  EXPECT_EQ((*changed)->nodes[1]->status.gpus.size(), 4u);
  ASSERT_EQ((*first)->pods.size(), (*changed)->pods.size());
  for (size_t i = 0; i < (*first)->pods.size(); ++i) {
    EXPECT_EQ((*first)->pods[i].get(), (*changed)->pods[i].get());
  }
  // The first result is as it was.
  EXPECT_EQ((*first)->nodes[1]->status.gpus.size(), 8u);
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
