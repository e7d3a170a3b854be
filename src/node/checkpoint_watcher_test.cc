#include "node/checkpoint_watcher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "node/test_support.h"

namespace strata::node {
namespace {

namespace fs = std::filesystem;
using ::strata::node::testing::TempDir;
using namespace std::chrono_literals;

constexpr Duration kLongWait = 60s;

void WriteAtomically(const std::string& dir, const std::string& name) {
  std::ofstream(dir + "/" + name + ".tmp") << "state";
  fs::rename(dir + "/" + name + ".tmp", dir + "/" + name);
}

TEST(CheckpointWatcherTest, RecordsTheTimeOfEachFinishedCheckpoint) {
  TempDir root;
  FakeClock clock;
  const std::string dir = root.File("ckpt");
  Result<std::unique_ptr<CheckpointWatcher>> watcher = CheckpointWatcher::Create(dir, &clock);
  ASSERT_TRUE(watcher) << watcher.error().ToString();
  EXPECT_FALSE((*watcher)->LastCheckpoint());

  WriteAtomically(dir, "step-10.json");
  ASSERT_TRUE((*watcher)->WaitForCheckpoints(1, kLongWait));
  EXPECT_EQ((*watcher)->LastCheckpoint(), clock.Now());
  EXPECT_EQ((*watcher)->checkpoints_seen(), 1u) << "the .tmp file alone is not a checkpoint";

  clock.Advance(1h);
  fs::create_directory(dir + "/step-20");
  ASSERT_TRUE((*watcher)->WaitForCheckpoints(2, kLongWait));
  EXPECT_EQ((*watcher)->LastCheckpoint(), clock.Now());

  clock.Advance(1h);
  std::ofstream(dir + "/step-20/shard-0") << "weights";
  ASSERT_TRUE((*watcher)->WaitForCheckpoints(3, kLongWait));
  EXPECT_EQ((*watcher)->LastCheckpoint(), clock.Now());
}

TEST(CheckpointWatcherTest, RemembersACheckpointWrittenBeforeItStarted) {
  TempDir root;
  FakeClock clock;
  const std::string dir = root.File("ckpt");
  fs::create_directories(dir);
  std::ofstream(dir + "/step-5.json") << "state";
  const auto written = fs::file_time_type::clock::now() - 10min;
  fs::last_write_time(dir + "/step-5.json", written);

  Result<std::unique_ptr<CheckpointWatcher>> watcher = CheckpointWatcher::Create(dir, &clock);
  ASSERT_TRUE(watcher) << watcher.error().ToString();
  std::optional<TimePoint> last = (*watcher)->LastCheckpoint();
  ASSERT_TRUE(last);
  EXPECT_EQ(*last,
            std::chrono::time_point_cast<Duration>(std::chrono::file_clock::to_sys(written)));
  EXPECT_EQ((*watcher)->checkpoints_seen(), 0u);
}

}  // namespace
}  // namespace strata::node
