#include "cluster/cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "cluster/stored_object.h"

namespace strata::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

api::Pod MakePod(const std::string& name, const std::string& node) {
  api::Pod pod;
  pod.metadata.name = name;
  pod.metadata.namespace_name = "team-a";
  pod.spec.node_name = node;
  pod.spec.template_.command = {"sleep", "1"};
  return pod;
}

api::Node MakeNode(const std::string& name) {
  api::Node node;
  node.metadata.name = name;
  return node;
}

std::vector<std::string> Names(const std::vector<ObjectRef>& refs) {
  std::vector<std::string> out;
  for (const ObjectRef& ref : refs) out.push_back(ref->raw.key.name);
  return out;
}

// "name" for a current object, "-name" for a deletion.
std::vector<std::string> Described(const Changes& changes) {
  std::vector<std::string> out;
  for (const Change& change : changes.changes) {
    out.push_back(change.current ? change.key.name : "-" + change.key.name);
  }
  return out;
}

CacheOptions PodsAndNodes() {
  CacheOptions options;
  options.kinds = {"Node", "Pod"};
  options.indexes.push_back({"pods-by-node", "Pod", [](const CachedObject& object) {
                               const api::Pod* pod = object.As<api::Pod>();
                               if (pod == nullptr || pod->spec.node_name.empty()) {
                                 return std::vector<std::string>{};
                               }
                               return std::vector<std::string>{pod->spec.node_name};
                             }});
  return options;
}

class CacheTest : public ::testing::Test {
 protected:
  store::Object Put(const api::Object& value) {
    store::ObjectKey key{std::string(value.kind()), value.namespace_name(), value.name()};
    Result<store::Object> existing = store_->Get(key);
    Result<store::Object> written = existing ? store_->Update(EncodeForStore(value, *existing))
                                             : store_->Create(EncodeForStore(value));
    EXPECT_TRUE(written.has_value()) << written.error().ToString();
    return *written;
  }
  void Delete(const std::string& kind, const std::string& ns, const std::string& name) {
    ASSERT_TRUE(store_->Delete({kind, ns, name}).has_value());
  }

  FakeClock clock_;
  std::unique_ptr<store::Store> store_ = store::NewMemoryStore({&clock_, 10000});
};

TEST_F(CacheTest, ListsOnceThenFollowsTheWatch) {
  Put(MakeNode("n1"));
  Put(MakePod("a", "n1"));
  Cache cache(*store_, PodsAndNodes());
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_THAT(Names(cache.List("Pod")), ElementsAre("a"));
  EXPECT_THAT(Names(cache.List("Node")), ElementsAre("n1"));

  Put(MakePod("b", "n1"));
  Delete("Pod", "team-a", "a");
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_THAT(Names(cache.List("Pod")), ElementsAre("b"));
  EXPECT_EQ(cache.lists(), 2);  // one per kind, never again
  ASSERT_NE(cache.Get({"Pod", "team-a", "b"}), nullptr);
  EXPECT_EQ(cache.Get({"Pod", "team-a", "b"})->As<api::Pod>()->spec.node_name, "n1");
  EXPECT_EQ(cache.Get({"Pod", "team-a", "a"}), nullptr);
}

TEST_F(CacheTest, KindsNotFollowedAreNotHeld) {
  api::Queue queue;
  queue.metadata.name = "q";
  Put(queue);
  Cache cache(*store_, PodsAndNodes());
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_EQ(cache.Get({"Queue", "", "q"}), nullptr);
  EXPECT_EQ(cache.Count("Queue"), 0u);
}

TEST_F(CacheTest, AFreshCursorGetsEverythingThenOnlyWhatChanged) {
  Put(MakePod("a", ""));
  Put(MakePod("b", ""));
  Put(MakeNode("n1"));
  Cache cache(*store_, PodsAndNodes());
  ASSERT_TRUE(cache.Sync().ok());
  Changes first = cache.ChangesSince(0, {"Pod"});
  EXPECT_TRUE(first.resync);
  EXPECT_THAT(Described(first), ElementsAre("a", "b"));

  Put(MakePod("b", "n1"));
  Put(MakePod("b", "n2"));
  Put(MakeNode("n1"));
  Delete("Pod", "team-a", "a");
  ASSERT_TRUE(cache.Sync().ok());
  Changes next = cache.ChangesSince(first.cursor, {"Pod"});
  EXPECT_FALSE(next.resync);
  // b once, in its latest state; a's deletion with its last state; the Node is another kind.
  EXPECT_THAT(Described(next), ElementsAre("b", "-a"));
  EXPECT_EQ(next.changes[0].current->As<api::Pod>()->spec.node_name, "n2");
  ASSERT_NE(next.changes[1].last, nullptr);
  EXPECT_EQ(next.changes[1].last->raw.key.name, "a");

  EXPECT_THAT(cache.ChangesSince(next.cursor, {"Pod", "Node"}).changes, IsEmpty());
}

TEST_F(CacheTest, IndexesFollowChanges) {
  Put(MakePod("a", "n1"));
  Put(MakePod("b", "n2"));
  Cache cache(*store_, PodsAndNodes());
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_THAT(Names(cache.Indexed("pods-by-node", "n1")), ElementsAre("a"));
  Put(MakePod("b", "n1"));
  Put(MakePod("c", "n1"));
  Delete("Pod", "team-a", "a");
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_THAT(Names(cache.Indexed("pods-by-node", "n1")), ElementsAre("b", "c"));
  EXPECT_THAT(cache.Indexed("pods-by-node", "n2"), IsEmpty());
}

TEST_F(CacheTest, AnExpiredWatchIsListedAgainAndTheDifferencesAreLoggedAsChanges) {
  Put(MakePod("a", ""));
  Put(MakePod("b", ""));
  CacheOptions options = PodsAndNodes();
  options.watch_buffer = 2;
  Cache cache(*store_, options);
  ASSERT_TRUE(cache.Sync().ok());
  const uint64_t cursor = cache.ChangesSince(0, {"Pod"}).cursor;
  // More changes than the watch holds: it expires.
  Delete("Pod", "team-a", "a");
  for (int i = 0; i < 5; ++i) Put(MakePod("c" + std::to_string(i), ""));
  Put(MakePod("b", "n1"));
  ASSERT_TRUE(cache.Sync().ok());
  EXPECT_EQ(cache.lists(), 3);
  EXPECT_THAT(Names(cache.List("Pod")), ElementsAre("b", "c0", "c1", "c2", "c3", "c4"));
  Changes changes = cache.ChangesSince(cursor, {"Pod"});
  EXPECT_FALSE(changes.resync);
  EXPECT_THAT(Described(changes), UnorderedElementsAre("b", "c0", "c1", "c2", "c3", "c4", "-a"));
}

TEST_F(CacheTest, ACursorOlderThanTheLogResyncs) {
  CacheOptions options = PodsAndNodes();
  options.change_log_limit = 3;
  Cache cache(*store_, options);
  ASSERT_TRUE(cache.Sync().ok());
  const uint64_t cursor = cache.ChangesSince(0, {"Pod"}).cursor;
  for (int i = 0; i < 5; ++i) Put(MakePod("p" + std::to_string(i), ""));
  Delete("Pod", "team-a", "p0");
  ASSERT_TRUE(cache.Sync().ok());
  Changes changes = cache.ChangesSince(cursor, {"Pod"});
  EXPECT_TRUE(changes.resync);
  EXPECT_THAT(Described(changes), ElementsAre("p1", "p2", "p3", "p4"));
}

TEST_F(CacheTest, AnObjectThatDoesNotDecodeIsHeldWithItsError) {
  store::Object bad;
  bad.key = {"Pod", "team-a", "broken"};
  bad.body = {
      {"apiVersion", "strata.dev/v1alpha1"}, {"kind", "Pod"}, {"spec", {{"priority", "high"}}}};
  ASSERT_TRUE(store_->Create(bad).has_value());
  Cache cache(*store_, PodsAndNodes());
  ASSERT_TRUE(cache.Sync().ok());
  ObjectRef held = cache.Get({"Pod", "team-a", "broken"});
  ASSERT_NE(held, nullptr);
  EXPECT_FALSE(held->object.has_value());
  EXPECT_FALSE(held->error.ok());
  EXPECT_THAT(held->error.message(), ::testing::HasSubstr("broken"));
}

TEST_F(CacheTest, NotificationsComeFromTheFollowedKindsOnly) {
  Cache cache(*store_, PodsAndNodes());
  ASSERT_TRUE(cache.Sync().ok());
  const uint64_t pods = cache.Notifications({"Pod"});
  Put(MakeNode("n1"));
  EXPECT_EQ(cache.Notifications({"Pod"}), pods);
  std::thread writer([&] { Put(MakePod("a", "")); });
  const uint64_t woken = cache.WaitForNotification(
      {"Pod"}, pods, std::chrono::steady_clock::now() + std::chrono::seconds(30));
  writer.join();
  EXPECT_GT(woken, pods);
}

TEST_F(CacheTest, InterruptEndsWaits) {
  Cache cache(*store_, PodsAndNodes());
  ASSERT_TRUE(cache.Sync().ok());
  std::thread stopper([&] { cache.Interrupt(); });
  const uint64_t seen = cache.Notifications({"Pod"});
  EXPECT_EQ(cache.WaitForNotification({"Pod"}, seen,
                                      std::chrono::steady_clock::now() + std::chrono::hours(1)),
            seen);
  stopper.join();
}

}  // namespace
}  // namespace strata::cluster
