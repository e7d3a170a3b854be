// An acknowledged write survives kill -9 of the process that made it: a forked writer reports
// each acknowledged write through a pipe and is killed mid-stream; the parent then checks the
// file's integrity, finds every acknowledged write, and continues the versions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "store/sqlite_store.h"
#include "store/store_test_backends.h"

namespace strata::store {
namespace {

// What the writer sends after each acknowledged write; smaller than PIPE_BUF, so each write(2)
// of one is atomic.
struct Ack {
  int64_t version;
  int32_t round;
  int32_t batch;  // 1 for the three objects of a batch Apply, 0 otherwise
};

Object MakeJob(const std::string& name, int round) {
  Object object;
  object.key = {"Job", "crash", name};
  object.body = {{"spec", {{"round", round}}}};
  return object;
}

std::string Name(const Ack& ack, int part) {
  return (ack.batch ? "batch-" : "job-") + std::to_string(ack.round) +
         (ack.batch ? "-" + std::to_string(part) : "");
}

// The child: writes forever (until killed), acknowledging each write on `ack_fd`. Each round
// creates a job, updates the previous round's job, and every fourth round applies a batch of
// three creates.
[[noreturn]] void RunWriter(const std::string& dir, SqliteDurability durability, int ack_fd) {
  StoreOptions options;
  options.history_limit = 1'000'000;
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(dir, options, durability);
  if (!store) _exit(2);
  auto acknowledge = [&](const Ack& ack) {
    if (write(ack_fd, &ack, sizeof(ack)) != sizeof(ack)) _exit(3);
  };
  for (int32_t round = 0;; ++round) {
    Result<Object> created = (*store)->Create(MakeJob("job-" + std::to_string(round), round));
    if (!created) _exit(4);
    acknowledge({created->resource_version, round, 0});
    if (round > 0) {
      Result<Object> updated = (*store)->Update(MakeJob("job-" + std::to_string(round - 1), round));
      if (!updated) _exit(5);
      acknowledge({updated->resource_version, round - 1, 0});
    }
    if (round % 4 == 0) {
      std::vector<Write> batch;
      for (int part = 0; part < 3; ++part) {
        batch.push_back({WriteOp::kCreate, MakeJob(Name({0, round, 1}, part), round)});
      }
      Result<std::vector<Object>> applied = (*store)->Apply(batch);
      if (!applied) _exit(6);
      acknowledge({applied->back().resource_version, round, 1});
    }
  }
}

std::string IntegrityCheck(const std::string& dir) {
  sqlite3* db = nullptr;
  std::string path = (std::filesystem::path(dir) / kSqliteStoreFileName).string();
  std::string result = "cannot open";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW) {
      result = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    }
    sqlite3_finalize(statement);
  }
  sqlite3_close(db);
  return result;
}

struct CrashCase {
  size_t kill_after_acks;
  SqliteDurability durability;
};

class SqliteCrashTest : public ::testing::TestWithParam<CrashCase> {};

TEST_P(SqliteCrashTest, AcknowledgedWritesSurviveKillNine) {
  std::string dir = MakeTempDir();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t writer = fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    close(fds[0]);
    RunWriter(dir, GetParam().durability, fds[1]);
  }
  close(fds[1]);

  std::vector<Ack> acks;
  Ack ack;
  bool killed = false;
  while (read(fds[0], &ack, sizeof(ack)) == sizeof(ack)) {
    acks.push_back(ack);
    if (!killed && acks.size() >= GetParam().kill_after_acks) {
      ASSERT_EQ(kill(writer, SIGKILL), 0);
      killed = true;
    }
  }
  close(fds[0]);
  int wait_status = 0;
  ASSERT_EQ(waitpid(writer, &wait_status, 0), writer);
  ASSERT_TRUE(WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL)
      << "the writer stopped on its own with status " << wait_status;
  ASSERT_GE(acks.size(), GetParam().kill_after_acks);

  EXPECT_EQ(IntegrityCheck(dir), "ok");

  StoreOptions options;
  options.history_limit = 1'000'000;
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(dir, options);
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  int64_t last_acked = 0;
  for (const Ack& acked : acks) {
    last_acked = std::max(last_acked, acked.version);
    for (int part = 0; part < (acked.batch ? 3 : 1); ++part) {
      Result<Object> found = (*store)->Get({"Job", "crash", Name(acked, part)});
      ASSERT_TRUE(found.has_value())
          << "acknowledged write lost: " << Name(acked, part) << "@" << acked.version;
      EXPECT_GE(found->resource_version, acked.version - (acked.batch ? 2 - part : 0));
    }
  }
  int64_t current = (*store)->CurrentVersion();
  EXPECT_GE(current, last_acked);

  // Every write in the kept history, acknowledged or not, is whole: a batch is all or nothing,
  // and the versions run without a gap.
  WatchOptions from_start;
  from_start.from_version = 0;
  from_start.buffer_limit = 1'000'000;
  std::unique_ptr<Watcher> watcher = std::move(*(*store)->Watch(from_start));
  std::map<std::string, int> batch_parts;
  for (int64_t version = 1; version <= current; ++version) {
    Result<std::optional<WatchEvent>> event = watcher->TryNext();
    ASSERT_TRUE(event.has_value() && event->has_value()) << "no change at version " << version;
    EXPECT_EQ((*event)->object.resource_version, version);
    const std::string& name = (*event)->object.key.name;
    if (name.rfind("batch-", 0) == 0) batch_parts[name.substr(0, name.rfind('-'))]++;
  }
  for (const auto& [batch, parts] : batch_parts) EXPECT_EQ(parts, 3) << batch;

  Result<Object> next = (*store)->Create(MakeJob("after-restart", 0));
  ASSERT_TRUE(next.has_value()) << next.error().ToString();
  EXPECT_EQ(next->resource_version, current + 1);
  store->reset();
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(KillPoints, SqliteCrashTest,
                         ::testing::Values(CrashCase{1, SqliteDurability::kProcessCrash},
                                           CrashCase{7, SqliteDurability::kProcessCrash},
                                           CrashCase{60, SqliteDurability::kProcessCrash},
                                           CrashCase{333, SqliteDurability::kProcessCrash},
                                           CrashCase{1000, SqliteDurability::kProcessCrash},
                                           CrashCase{40, SqliteDurability::kPowerLoss}),
                         [](const auto& info) {
                           return std::string(info.param.durability == SqliteDurability::kPowerLoss
                                                  ? "PowerLoss"
                                                  : "ProcessCrash") +
                                  "After" + std::to_string(info.param.kill_after_acks);
                         });

}  // namespace
}  // namespace strata::store
