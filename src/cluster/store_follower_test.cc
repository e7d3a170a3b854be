#include "cluster/store_follower.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace strata::cluster {
namespace {

// What a StoreFollower told it: each object's name and resource version, and the relists.
class RecordedObjects : public FollowedObjects {
 public:
  void Clear() override {
    std::lock_guard lock(mutex_);
    versions_.clear();
  }
  void Put(store::Object object) override {
    std::lock_guard lock(mutex_);
    versions_[Name(object.key)] = object.resource_version;
  }
  void Remove(const store::Object& object) override {
    std::lock_guard lock(mutex_);
    versions_.erase(Name(object.key));
  }
  void Relisted() override { ++relists_; }

  std::map<std::string, int64_t> versions() const {
    std::lock_guard lock(mutex_);
    return versions_;
  }
  int relists() const { return relists_; }

 private:
  static std::string Name(const store::ObjectKey& key) {
    return key.kind + "/" + key.namespace_name + "/" + key.name;
  }

  mutable std::mutex mutex_;
  std::map<std::string, int64_t> versions_;
  std::atomic<int> relists_{0};
};

// A memory store whose lists fail while `fail_lists` is set.
class FakeListFailingStore : public store::Store {
 public:
  std::atomic<bool> fail_lists{false};

  Result<std::vector<store::Object>> Apply(std::vector<store::Write> writes) override {
    return inner_->Apply(std::move(writes));
  }
  Result<store::Object> Get(const store::ObjectKey& key) const override { return inner_->Get(key); }
  Result<store::ListResult> List(const store::Selection& selection) const override {
    if (fail_lists) return Err(InternalError("the disk is gone"));
    return inner_->List(selection);
  }
  Result<std::unique_ptr<store::Watcher>> Watch(const store::WatchOptions& options) override {
    return inner_->Watch(options);
  }
  int64_t CurrentVersion() const override { return inner_->CurrentVersion(); }

 private:
  std::unique_ptr<store::Store> inner_ = store::NewMemoryStore({});
};

store::Object MakeObject(const std::string& kind, const std::string& name) {
  store::Object object;
  object.key = {kind, kind == "Pod" ? "default" : "", name};
  object.body = {{"kind", kind}, {"spec", {{"n", 1}}}};
  return object;
}

void Create(store::Store& store, const std::string& kind, const std::string& name) {
  ASSERT_TRUE(store.Create(MakeObject(kind, name)));
}

// Reads through `follower` and returns the table as the read saw it.
std::map<std::string, int64_t> ReadTable(StoreFollower& follower, const RecordedObjects& table) {
  std::map<std::string, int64_t> seen;
  Status status = follower.Read([&] { seen = table.versions(); });
  EXPECT_TRUE(status.ok()) << status.ToString();
  return seen;
}

TEST(StoreFollowerTest, FollowsItsKindsAndSkipsTheOthers) {
  std::unique_ptr<store::Store> store = store::NewMemoryStore({});
  Create(*store, "Node", "n1");
  Create(*store, "Pod", "p1");
  Create(*store, "Queue", "q1");
  RecordedObjects table;
  StoreFollower follower(*store, {"Node", "Pod"}, 100, table);
  EXPECT_EQ(ReadTable(follower, table),
            (std::map<std::string, int64_t>{{"Node//n1", 1}, {"Pod/default/p1", 2}}));

  Create(*store, "Node", "n2");   // 4
  Create(*store, "Queue", "q2");  // 5: not followed
  Result<store::Object> updated = store->Update(*store->Get({"Node", "", "n1"}));  // 6
  ASSERT_TRUE(updated) << updated.error().ToString();
  ASSERT_TRUE(store->Delete({"Pod", "default", "p1"}));  // 7
  EXPECT_EQ(ReadTable(follower, table),
            (std::map<std::string, int64_t>{{"Node//n1", 6}, {"Node//n2", 4}}));
  EXPECT_EQ(table.relists(), 1);
}

// Between reads, the follower's thread applies each change as the watch delivers it.
TEST(StoreFollowerTest, AppliesChangesOnItsOwnThread) {
  std::unique_ptr<store::Store> store = store::NewMemoryStore({});
  RecordedObjects table;
  StoreFollower follower(*store, {"Node"}, 100, table);
  EXPECT_TRUE(ReadTable(follower, table).empty());
  Create(*store, "Node", "n1");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (table.versions().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(table.versions(), (std::map<std::string, int64_t>{{"Node//n1", 1}}));
}

TEST(StoreFollowerTest, AFailedListIsReportedAndListedAgainByTheNextRead) {
  FakeListFailingStore store;
  Create(store, "Node", "n1");
  RecordedObjects table;
  StoreFollower follower(store, {"Node"}, 100, table);
  store.fail_lists = true;
  bool read = false;
  Status failed = follower.Read([&] { read = true; });
  EXPECT_FALSE(failed.ok());
  EXPECT_NE(failed.ToString().find("the disk is gone"), std::string::npos) << failed.ToString();
  EXPECT_FALSE(read);
  EXPECT_EQ(table.relists(), 0);

  store.fail_lists = false;
  Create(store, "Node", "n2");
  EXPECT_EQ(ReadTable(follower, table),
            (std::map<std::string, int64_t>{{"Node//n1", 1}, {"Node//n2", 2}}));
  EXPECT_EQ(table.relists(), 1);
}

TEST(StoreFollowerTest, ListsAgainWhenItsWatchFellBehind) {
  std::unique_ptr<store::Store> store = store::NewMemoryStore({});
  RecordedObjects table;
  StoreFollower follower(*store, {"Node"}, /*watch_buffer=*/2, table);
  EXPECT_TRUE(ReadTable(follower, table).empty());
  // One batch of more changes than the watch holds: the store expires the watch at once.
  std::vector<store::Write> writes;
  for (int i = 0; i < 5; ++i) {
    writes.push_back({store::WriteOp::kCreate, MakeObject("Node", "n" + std::to_string(i))});
  }
  ASSERT_TRUE(store->Apply(std::move(writes)));
  EXPECT_EQ(ReadTable(follower, table).size(), 5u);
  EXPECT_EQ(table.relists(), 2);
}

}  // namespace
}  // namespace strata::cluster
