// Behaviour of every Store backend: each test runs against each backend.
#include "store/store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <thread>

#include "store/store_test_backends.h"

namespace strata::store {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr Duration kPatience = std::chrono::seconds(30);

Object MakeObject(std::string kind, std::string ns, std::string name, Labels labels = {}) {
  Object object;
  object.key = {std::move(kind), std::move(ns), std::move(name)};
  object.labels = std::move(labels);
  object.body = {{"spec", {{"replicas", 1}}}};
  return object;
}

std::vector<std::string> Names(const std::vector<Object>& objects) {
  std::vector<std::string> names;
  for (const Object& object : objects) names.push_back(object.key.name);
  return names;
}

// "ADDED a@3"
std::string Describe(const WatchEvent& event) {
  return std::string(WatchEventTypeName(event.type)) + " " + event.object.key.name + "@" +
         std::to_string(event.object.resource_version);
}

// Everything a watcher has waiting, without blocking.
std::vector<std::string> Drain(Watcher& watcher) {
  std::vector<std::string> events;
  while (true) {
    Result<std::optional<WatchEvent>> event = watcher.TryNext();
    if (!event) {
      events.push_back("error " + event.error().ToString());
      return events;
    }
    if (!*event) return events;
    events.push_back(Describe(**event));
  }
}

class StoreTest : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    options_.clock = &clock_;
    store_ = Open();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<Store> Open() {
    Result<std::unique_ptr<Store>> store = GetParam().open(options_, dir_);
    EXPECT_TRUE(store.has_value()) << store.error().ToString();
    return store ? std::move(*store) : nullptr;
  }

  std::unique_ptr<Watcher> WatchFrom(std::optional<int64_t> version, Selection selection = {}) {
    WatchOptions options;
    options.from_version = version;
    options.selection = std::move(selection);
    Result<std::unique_ptr<Watcher>> watcher = store_->Watch(options);
    EXPECT_TRUE(watcher.has_value()) << watcher.error().ToString();
    return watcher ? std::move(*watcher) : nullptr;
  }

  FakeClock clock_;
  StoreOptions options_;
  std::string dir_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreTest, CreateStampsVersionUidAndCreationTime) {
  clock_.Advance(std::chrono::seconds(90));
  Result<Object> created = store_->Create(MakeObject("Job", "team-a", "train", {{"x", "y"}}));
  ASSERT_TRUE(created.has_value()) << created.error().ToString();
  EXPECT_EQ(created->resource_version, 1);
  EXPECT_EQ(created->uid.size(), 36u);
  EXPECT_EQ(created->creation_timestamp, clock_.Now());
  const nlohmann::json& metadata = created->body["metadata"];
  EXPECT_EQ(metadata["name"], "train");
  EXPECT_EQ(metadata["namespace"], "team-a");
  EXPECT_EQ(metadata["resourceVersion"], "1");
  EXPECT_EQ(metadata["uid"], created->uid);
  EXPECT_EQ(metadata["creationTimestamp"], "2026-01-01T00:01:30Z");
  EXPECT_EQ(metadata["labels"]["x"], "y");
  EXPECT_EQ(created->body["spec"]["replicas"], 1);

  Result<Object> read = store_->Get({"Job", "team-a", "train"});
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(*read, *created);
}

TEST_P(StoreTest, CreateOfAnExistingNameIsAlreadyExists) {
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "x")));
  Result<Object> again = store_->Create(MakeObject("Job", "a", "x"));
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(again.error().message(), HasSubstr("Job \"a/x\" already exists"));
  EXPECT_EQ(store_->CurrentVersion(), 1);
}

TEST_P(StoreTest, OneVersionCountsWritesOfEveryKind) {
  EXPECT_EQ(store_->CurrentVersion(), 0);
  EXPECT_EQ(store_->Create(MakeObject("Job", "a", "x"))->resource_version, 1);
  EXPECT_EQ(store_->Create(MakeObject("Node", "", "gpu-1"))->resource_version, 2);
  EXPECT_EQ(store_->Update(MakeObject("Job", "a", "x"))->resource_version, 3);
  EXPECT_EQ(store_->CurrentVersion(), 3);
}

TEST_P(StoreTest, UpdateWithAStaleVersionIsAConflict) {
  Result<Object> created = store_->Create(MakeObject("Job", "a", "x"));
  Object first = *created;
  first.body["spec"]["replicas"] = 2;
  Result<Object> updated = store_->Update(first);
  ASSERT_TRUE(updated.has_value()) << updated.error().ToString();
  EXPECT_EQ(updated->resource_version, 2);
  EXPECT_EQ(updated->uid, created->uid);
  EXPECT_EQ(updated->creation_timestamp, created->creation_timestamp);

  first.body["spec"]["replicas"] = 3;  // still carries version 1
  Result<Object> stale = store_->Update(first);
  ASSERT_FALSE(stale.has_value());
  EXPECT_EQ(stale.error().code(), StatusCode::kConflict);
  EXPECT_THAT(stale.error().message(), HasSubstr("has resourceVersion 2, not 1"));
  EXPECT_EQ(store_->Get({"Job", "a", "x"})->body["spec"]["replicas"], 2);
}

TEST_P(StoreTest, UpdateWithoutVersionIsUnconditional) {
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "x")));
  ASSERT_TRUE(store_->Update(MakeObject("Job", "a", "x")));
  Object blind = MakeObject("Job", "a", "x");
  blind.body["spec"]["replicas"] = 7;
  Result<Object> updated = store_->Update(blind);
  ASSERT_TRUE(updated.has_value());
  EXPECT_EQ(updated->resource_version, 3);
  EXPECT_EQ(store_->Get({"Job", "a", "x"})->body["spec"]["replicas"], 7);
}

TEST_P(StoreTest, UpdateWithAnotherUidIsAConflict) {
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "x")));
  Object other = MakeObject("Job", "a", "x");
  other.uid = "00000000-0000-4000-8000-000000000000";
  Result<Object> updated = store_->Update(other);
  ASSERT_FALSE(updated.has_value());
  EXPECT_EQ(updated.error().code(), StatusCode::kConflict);
}

TEST_P(StoreTest, UpdateOrDeleteOfAMissingObjectIsNotFound) {
  Result<Object> updated = store_->Update(MakeObject("Job", "a", "x"));
  ASSERT_FALSE(updated.has_value());
  EXPECT_EQ(updated.error().code(), StatusCode::kNotFound);
  Result<Object> deleted = store_->Delete({"Job", "a", "x"});
  ASSERT_FALSE(deleted.has_value());
  EXPECT_EQ(deleted.error().code(), StatusCode::kNotFound);
  EXPECT_THAT(deleted.error().message(), HasSubstr("Job \"a/x\" not found"));
}

TEST_P(StoreTest, DeleteReturnsTheLastStateAtTheDeletionVersion) {
  Result<Object> created = store_->Create(MakeObject("Job", "a", "x"));
  Result<Object> stale = store_->Delete({"Job", "a", "x"}, /*precondition_version=*/5);
  ASSERT_FALSE(stale.has_value());
  EXPECT_EQ(stale.error().code(), StatusCode::kConflict);

  Result<Object> deleted = store_->Delete({"Job", "a", "x"}, created->resource_version);
  ASSERT_TRUE(deleted.has_value()) << deleted.error().ToString();
  EXPECT_EQ(deleted->resource_version, 2);
  EXPECT_EQ(deleted->uid, created->uid);
  EXPECT_EQ(deleted->body["metadata"]["resourceVersion"], "2");
  EXPECT_EQ(store_->Get({"Job", "a", "x"}).error().code(), StatusCode::kNotFound);
}

TEST_P(StoreTest, InvalidObjectsAreRejectedNamingTheField) {
  Result<Object> unnamed = store_->Create(MakeObject("Job", "a", ""));
  ASSERT_FALSE(unnamed.has_value());
  EXPECT_EQ(unnamed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(unnamed.error().message(), HasSubstr("metadata.name: must not be empty"));

  Result<Object> slash = store_->Create(MakeObject("Job", "a/b", "x"));
  ASSERT_FALSE(slash.has_value());
  EXPECT_THAT(slash.error().message(),
              HasSubstr("metadata.namespace: invalid character at offset 1"));

  Object array_body = MakeObject("Job", "a", "x");
  array_body.body = nlohmann::json::array();
  EXPECT_THAT(store_->Create(array_body).error().message(),
              HasSubstr("body: must be a JSON object"));
  EXPECT_EQ(store_->CurrentVersion(), 0);
}

TEST_P(StoreTest, ListSelectsByKindNamespaceAndLabels) {
  ASSERT_TRUE(store_->Create(MakeObject("Job", "b", "j3", {{"team", "x"}})));
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "j2", {{"team", "y"}})));
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "j1", {{"team", "x"}})));
  ASSERT_TRUE(store_->Create(MakeObject("Node", "", "n1", {{"team", "x"}})));
  ASSERT_TRUE(store_->Create(MakeObject("Jobs", "a", "other")));

  Result<ListResult> jobs = store_->List({"Job", std::nullopt, {}});
  ASSERT_TRUE(jobs.has_value());
  EXPECT_THAT(Names(jobs->items), ElementsAre("j1", "j2", "j3"));
  EXPECT_EQ(jobs->resource_version, 5);

  EXPECT_THAT(Names(store_->List({"Job", "a", {}})->items), ElementsAre("j1", "j2"));
  Selection team_x{"Job", std::nullopt, *LabelSelector::Parse("team=x")};
  EXPECT_THAT(Names(store_->List(team_x)->items), ElementsAre("j1", "j3"));
  EXPECT_THAT(Names(store_->List({"Node", "", {}})->items), ElementsAre("n1"));
  EXPECT_TRUE(store_->List({"Queue", std::nullopt, {}})->items.empty());
  EXPECT_EQ(store_->List({"", std::nullopt, {}}).error().code(), StatusCode::kInvalidArgument);
}

TEST_P(StoreTest, ApplyIsAllOrNothing) {
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "exists")));
  std::unique_ptr<Watcher> watcher = WatchFrom(std::nullopt);
  std::vector<Write> batch{{WriteOp::kCreate, MakeObject("Job", "a", "new-1")},
                           {WriteOp::kCreate, MakeObject("Job", "a", "new-2")},
                           {WriteOp::kCreate, MakeObject("Job", "a", "exists")}};
  Result<std::vector<Object>> applied = store_->Apply(batch);
  ASSERT_FALSE(applied.has_value());
  EXPECT_EQ(applied.error().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(applied.error().message(), HasSubstr("writes[2]: Job \"a/exists\" already exists"));
  EXPECT_EQ(store_->CurrentVersion(), 1);
  EXPECT_EQ(store_->Get({"Job", "a", "new-1"}).error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Drain(*watcher).empty());

  std::vector<Write> invalid{{WriteOp::kCreate, MakeObject("Job", "a", "fine")},
                             {WriteOp::kCreate, MakeObject("Job", "a", "")}};
  EXPECT_THAT(store_->Apply(invalid).error().message(), HasSubstr("writes[1]: metadata.name"));
  EXPECT_EQ(store_->CurrentVersion(), 1);
}

TEST_P(StoreTest, ApplySeesItsOwnEarlierWrites) {
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "old")));
  Object updated = MakeObject("Job", "a", "x");
  updated.resource_version = 2;  // the version the create in this batch gets
  std::vector<Write> batch{{WriteOp::kCreate, MakeObject("Job", "a", "x")},
                           {WriteOp::kUpdate, updated},
                           {WriteOp::kDelete, MakeObject("Job", "a", "old")},
                           {WriteOp::kUpsert, MakeObject("Job", "a", "old")}};
  Result<std::vector<Object>> applied = store_->Apply(batch);
  ASSERT_TRUE(applied.has_value()) << applied.error().ToString();
  ASSERT_EQ(applied->size(), 4u);
  EXPECT_EQ((*applied)[1].resource_version, 3);
  EXPECT_EQ((*applied)[3].resource_version, 5);
  EXPECT_NE((*applied)[3].uid, (*applied)[2].uid) << "a re-created object gets a new uid";
  EXPECT_EQ(store_->CurrentVersion(), 5);
  EXPECT_THAT(Names(store_->List({"Job", "a", {}})->items), ElementsAre("old", "x"));
}

TEST_P(StoreTest, UpsertCreatesThenUpdates) {
  Result<Object> created = store_->Apply({{WriteOp::kUpsert, MakeObject("Job", "a", "x")}})->at(0);
  EXPECT_EQ(created->resource_version, 1);
  Result<std::vector<Object>> updated =
      store_->Apply({{WriteOp::kUpsert, MakeObject("Job", "a", "x")}});
  ASSERT_TRUE(updated.has_value());
  EXPECT_EQ(updated->at(0).resource_version, 2);
  EXPECT_EQ(updated->at(0).uid, created->uid);

  Object conditional = MakeObject("Job", "a", "absent");
  conditional.resource_version = 4;
  EXPECT_EQ(store_->Apply({{WriteOp::kUpsert, conditional}}).error().code(), StatusCode::kConflict);
}

TEST_P(StoreTest, WatchDeliversChangesInOrder) {
  std::unique_ptr<Watcher> watcher = WatchFrom(0);
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "x")));
  ASSERT_TRUE(store_->Update(MakeObject("Job", "a", "x")));
  ASSERT_TRUE(store_->Delete({"Job", "a", "x"}));
  EXPECT_THAT(Drain(*watcher), ElementsAre("ADDED x@1", "MODIFIED x@2", "DELETED x@3"));
  EXPECT_EQ(watcher->ProgressVersion(), 3);
}

TEST_P(StoreTest, ListThenWatchFromTheListVersionMissesNothing) {
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "before")));
  Result<ListResult> listed = store_->List({"Job", std::nullopt, {}});
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "between")));
  std::unique_ptr<Watcher> watcher = WatchFrom(listed->resource_version);
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "after")));
  EXPECT_THAT(Drain(*watcher), ElementsAre("ADDED between@2", "ADDED after@3"));
}

TEST_P(StoreTest, WatchFromAVersionNoLongerKeptIsExpired) {
  options_.history_limit = 3;
  store_.reset();
  store_ = Open();
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(store_->Create(MakeObject("Job", "a", std::to_string(i))));
  WatchOptions too_old;
  too_old.from_version = 1;
  Result<std::unique_ptr<Watcher>> expired = store_->Watch(too_old);
  ASSERT_FALSE(expired.has_value());
  EXPECT_EQ(expired.error().code(), StatusCode::kExpired);
  EXPECT_THAT(expired.error().message(), HasSubstr("list again"));

  std::unique_ptr<Watcher> oldest_kept = WatchFrom(2);
  EXPECT_THAT(Drain(*oldest_kept), ElementsAre("ADDED 2@3", "ADDED 3@4", "ADDED 4@5"));

  WatchOptions future;
  future.from_version = 6;
  EXPECT_EQ(store_->Watch(future).error().code(), StatusCode::kInvalidArgument);
  future.from_version = -1;
  EXPECT_EQ(store_->Watch(future).error().code(), StatusCode::kInvalidArgument);
}

TEST_P(StoreTest, WatchFiltersByKindNamespaceAndLabels) {
  Selection selection{"Job", "a", *LabelSelector::Parse("team=x")};
  std::unique_ptr<Watcher> watcher = WatchFrom(std::nullopt, selection);
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "in", {{"team", "x"}})));
  ASSERT_TRUE(store_->Create(MakeObject("Job", "b", "other-ns", {{"team", "x"}})));
  ASSERT_TRUE(store_->Create(MakeObject("Node", "", "other-kind", {{"team", "x"}})));
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "moves", {{"team", "y"}})));
  ASSERT_TRUE(store_->Update(MakeObject("Job", "a", "moves", {{"team", "x"}})));
  ASSERT_TRUE(store_->Update(MakeObject("Job", "a", "moves", {{"team", "z"}})));
  ASSERT_TRUE(store_->Update(MakeObject("Job", "a", "moves", {{"team", "w"}})));
  EXPECT_THAT(Drain(*watcher), ElementsAre("ADDED in@1", "ADDED moves@5", "DELETED moves@6"));
  EXPECT_EQ(watcher->ProgressVersion(), 7) << "filtered-out writes still advance the bookmark";
}

TEST_P(StoreTest, ASlowWatcherExpiresInsteadOfBlockingWriters) {
  WatchOptions options;
  options.buffer_limit = 3;
  std::unique_ptr<Watcher> slow = std::move(*store_->Watch(options));
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(store_->Create(MakeObject("Job", "a", std::to_string(i))));
  EXPECT_EQ(store_->CurrentVersion(), 5);
  Result<WatchEvent> next = slow->Next(kPatience);
  ASSERT_FALSE(next.has_value());
  EXPECT_EQ(next.error().code(), StatusCode::kExpired);
  EXPECT_EQ(slow->TryNext().error().code(), StatusCode::kExpired) << "expiry is final";
}

TEST_P(StoreTest, NotifyTellsAnEventLoopThatEventsWait) {
  std::unique_ptr<Watcher> watcher = WatchFrom(std::nullopt);
  std::atomic<int> notified{0};
  watcher->SetNotify([&] { notified++; });
  EXPECT_EQ(notified.load(), 0);
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "x")));
  EXPECT_EQ(notified.load(), 1);
  EXPECT_THAT(Drain(*watcher), ElementsAre("ADDED x@1"));

  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "y")));
  std::atomic<int> late{0};
  watcher->SetNotify([&] { late++; });
  EXPECT_EQ(late.load(), 1) << "a callback set while events wait is called at once";
  watcher->SetNotify(nullptr);
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "z")));
  EXPECT_EQ(late.load(), 1);
  EXPECT_EQ(notified.load(), 2) << "one call for y, none for z";
}

TEST_P(StoreTest, NextTimesOutWhenNothingHappens) {
  std::unique_ptr<Watcher> watcher = WatchFrom(std::nullopt);
  EXPECT_EQ(watcher->Next(Duration::zero()).error().code(), StatusCode::kDeadlineExceeded);
}

TEST_P(StoreTest, ABlockedConsumerWakesForAWrite) {
  std::unique_ptr<Watcher> watcher = WatchFrom(std::nullopt);
  Result<WatchEvent> received = Err(InternalError("not received"));
  std::thread consumer([&] { received = watcher->Next(kPatience); });
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "x")));
  consumer.join();
  ASSERT_TRUE(received.has_value()) << received.error().ToString();
  EXPECT_EQ(Describe(*received), "ADDED x@1");
}

TEST_P(StoreTest, ClosingTheStoreEndsWatchers) {
  std::unique_ptr<Watcher> watcher = WatchFrom(std::nullopt);
  ASSERT_TRUE(store_->Create(MakeObject("Job", "a", "x")));
  store_.reset();
  EXPECT_THAT(Drain(*watcher), ElementsAre("ADDED x@1", HasSubstr("Cancelled")));
}

// Concurrent Applies may be committed together; each still succeeds or fails on its own.
TEST_P(StoreTest, ConcurrentWritersGetDistinctVersionsInWatchOrder) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50;
  constexpr int kWrites = kThreads * kPerThread + 1;  // and one contended create
  WatchOptions options;
  options.buffer_limit = kWrites;
  std::unique_ptr<Watcher> watcher = std::move(*store_->Watch(options));
  std::vector<int64_t> seen;
  std::thread consumer([&] {
    while (seen.size() < kWrites) {
      Result<WatchEvent> event = watcher->Next(kPatience);
      if (!event) return;
      seen.push_back(event->object.resource_version);
    }
  });
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  std::atomic<int> contended_wins{0};
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        if (i == kPerThread / 2) {
          Result<Object> contended = store_->Create(MakeObject("Job", "a", "contended"));
          if (contended) {
            contended_wins++;
          } else if (contended.error().code() != StatusCode::kAlreadyExists) {
            failures++;
          }
        }
        std::string name = std::to_string(t) + "-" + std::to_string(i);
        if (!store_->Create(MakeObject("Job", "a", name))) failures++;
        if (!store_->List({"Job", "a", {}})) failures++;
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(contended_wins.load(), 1);
  EXPECT_EQ(store_->CurrentVersion(), kWrites);
  consumer.join();
  ASSERT_EQ(seen.size(), size_t{kWrites});
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], static_cast<int64_t>(i + 1));
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::ValuesIn(AllStoreBackends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace strata::store
