// What only the SQLite backend does: survive a reopen, guard its data dir, refuse foreign files.
// The behaviour it shares with the memory backend is tested in store_test.cc.
#include "store/sqlite_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>

#include "store/store_test_backends.h"

namespace strata::store {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Object MakeJob(std::string name) {
  Object object;
  object.key = {"Job", "team-a", std::move(name)};
  object.body = {{"spec", {{"replicas", 2}}}};
  return object;
}

// Runs `sql` on the store's file with SQLite directly and returns the first column of the first
// row as text.
std::string QueryFile(const std::string& dir, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string path = (std::filesystem::path(dir) / kSqliteStoreFileName).string();
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  std::string result;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
      sqlite3_step(statement) == SQLITE_ROW && sqlite3_column_text(statement, 0)) {
    result = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return result;
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    options_.clock = &clock_;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Store> Open(SqliteDurability durability = SqliteDurability::kPowerLoss) {
    Result<std::unique_ptr<Store>> store = OpenSqliteStore(dir_, options_, durability);
    EXPECT_TRUE(store.has_value()) << store.error().ToString();
    return store ? std::move(*store) : nullptr;
  }

  FakeClock clock_;
  StoreOptions options_;
  std::string dir_;
};

TEST_F(SqliteStoreTest, ReopeningKeepsObjectsVersionsAndHistory) {
  Object before;
  {
    std::unique_ptr<Store> store = Open();
    ASSERT_TRUE(store->Create(MakeJob("a")));
    ASSERT_TRUE(store->Create(MakeJob("b")));
    Object labelled = MakeJob("a");
    labelled.labels = {{"team", "x"}};
    before = *store->Update(labelled);
    ASSERT_TRUE(store->Delete({"Job", "team-a", "b"}));
  }
  std::unique_ptr<Store> store = Open();
  EXPECT_EQ(store->CurrentVersion(), 4);
  EXPECT_EQ(*store->Get({"Job", "team-a", "a"}), before);
  EXPECT_EQ(store->Get({"Job", "team-a", "b"}).error().code(), StatusCode::kNotFound);

  WatchOptions options;
  options.from_version = 2;
  options.selection.labels = *LabelSelector::Parse("team=x");
  std::unique_ptr<Watcher> watcher = std::move(*store->Watch(options));
  Result<std::optional<WatchEvent>> event = watcher->TryNext();
  ASSERT_TRUE(event.has_value() && event->has_value());
  EXPECT_EQ((*event)->type, WatchEventType::kAdded) << "a label change into the selection";
  EXPECT_EQ((*event)->object, before);
  EXPECT_EQ(store->Create(MakeJob("c"))->resource_version, 5);
}

TEST_F(SqliteStoreTest, HistoryOnDiskIsBounded) {
  options_.history_limit = 2;
  {
    std::unique_ptr<Store> store = Open();
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(store->Create(MakeJob(std::to_string(i))));
  }
  EXPECT_EQ(QueryFile(dir_, "SELECT count(*) FROM history"), "2");
  std::unique_ptr<Store> store = Open();
  WatchOptions options;
  options.from_version = 2;
  EXPECT_EQ(store->Watch(options).error().code(), StatusCode::kExpired);
  options.from_version = 3;
  EXPECT_TRUE(store->Watch(options).has_value());
}

TEST_F(SqliteStoreTest, AFailedCommitChangesNothing) {
  std::unique_ptr<Store> store = Open();
  ASSERT_TRUE(store->Create(MakeJob("before")));
  std::unique_ptr<Watcher> watcher = std::move(*store->Watch(WatchOptions{}));
  // Another connection makes the file refuse one object, so the batch's transaction fails after
  // its first write has reached the file.
  QueryFile(dir_,
            "CREATE TRIGGER refuse BEFORE INSERT ON history WHEN NEW.name = 'poison' "
            "BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
  Result<std::vector<Object>> applied =
      store->Apply({{WriteOp::kCreate, MakeJob("fine")}, {WriteOp::kCreate, MakeJob("poison")}});
  ASSERT_FALSE(applied.has_value());
  EXPECT_EQ(applied.error().code(), StatusCode::kInternal);
  EXPECT_THAT(applied.error().message(), HasSubstr("injected failure"));
  EXPECT_EQ(store->CurrentVersion(), 1);
  EXPECT_EQ(store->Get({"Job", "team-a", "fine"}).error().code(), StatusCode::kNotFound);
  EXPECT_FALSE(watcher->TryNext()->has_value());

  EXPECT_EQ(store->Create(MakeJob("after"))->resource_version, 2);
  store.reset();
  store = Open();
  EXPECT_EQ(store->CurrentVersion(), 2);
  EXPECT_EQ(store->Get({"Job", "team-a", "fine"}).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(QueryFile(dir_, "SELECT count(*) FROM history"), "2");
}

TEST_F(SqliteStoreTest, ASecondOpenOfTheDataDirIsRefused) {
  std::unique_ptr<Store> store = Open();
  Result<std::unique_ptr<Store>> second = OpenSqliteStore(dir_, options_);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.error().message(), HasSubstr("in use by another strata process"));
}

TEST_F(SqliteStoreTest, AnotherSchemaVersionIsRefused) {
  Open().reset();
  QueryFile(dir_, "UPDATE schema_version SET version = 99");
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(dir_, options_);
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.error().message(), HasSubstr("schema version 99"));
}

TEST_F(SqliteStoreTest, AFileThatIsNotAStoreIsAnError) {
  std::ofstream(std::filesystem::path(dir_) / kSqliteStoreFileName)
      << std::string(8192, 'x') << "not a database";
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(dir_, options_);
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code(), StatusCode::kInternal);
  EXPECT_THAT(store.error().message(), HasSubstr(kSqliteStoreFileName));
}

TEST_F(SqliteStoreTest, AnEmptyFileIsRefusedNotStartedAsANewStore) {
  {
    std::unique_ptr<Store> store = Open();
    ASSERT_TRUE(store->Create(MakeJob("a")));
  }
  const std::filesystem::path file = std::filesystem::path(dir_) / kSqliteStoreFileName;
  std::filesystem::resize_file(file, 0);
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(dir_, options_);
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code(), StatusCode::kInternal);
  EXPECT_THAT(store.error().message(), HasSubstr(file.string() + " is empty (0 bytes)"));
  // Refused without writing: the file is still there for whoever restores it.
  EXPECT_EQ(std::filesystem::file_size(file), 0u);
  // A file that does not exist is created, as always.
  std::filesystem::remove(file);
  std::unique_ptr<Store> created = Open();
  ASSERT_NE(created, nullptr);
  EXPECT_GT(std::filesystem::file_size(file), 0u);
}

TEST_F(SqliteStoreTest, ACorruptRowIsAnErrorNamingTheObject) {
  {
    std::unique_ptr<Store> store = Open();
    ASSERT_TRUE(store->Create(MakeJob("a")));
  }
  QueryFile(dir_, "UPDATE objects SET body = '[1, 2' WHERE name = 'a'");
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(dir_, options_);
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code(), StatusCode::kInternal);
  EXPECT_THAT(store.error().message(), HasSubstr("corrupt body of Job \"team-a/a\""));
}

TEST_F(SqliteStoreTest, BothDurabilitiesKeepWrites) {
  for (SqliteDurability durability :
       {SqliteDurability::kProcessCrash, SqliteDurability::kPowerLoss}) {
    std::unique_ptr<Store> store = Open(durability);
    ASSERT_TRUE(store->Apply({{WriteOp::kUpsert, MakeJob("x")}}));
  }
  std::unique_ptr<Store> store = Open();
  std::vector<std::string> names;
  Result<ListResult> listed = store->List({"Job", std::nullopt, {}});
  for (const Object& object : listed->items) {
    names.push_back(object.key.name + "@" + std::to_string(object.resource_version));
  }
  EXPECT_THAT(names, ElementsAre("x@2"));
  EXPECT_EQ(QueryFile(dir_, "PRAGMA journal_mode"), "wal");
}

}  // namespace
}  // namespace strata::store
