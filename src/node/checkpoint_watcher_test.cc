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
  Result<std::unique_ptr<CheckpointWatcher>> watcher = CheckpointWatcher::Create(&clock);
  ASSERT_TRUE(watcher) << watcher.error().ToString();
  ASSERT_TRUE((*watcher)->Watch(dir).ok());
  EXPECT_FALSE((*watcher)->LastCheckpoint(dir));

  WriteAtomically(dir, "step-10.json");
  ASSERT_TRUE((*watcher)->WaitForCheckpoints(dir, 1, kLongWait));
  EXPECT_EQ((*watcher)->LastCheckpoint(dir), clock.Now());
  EXPECT_EQ((*watcher)->checkpoints_seen(dir), 1u) << "the .tmp file alone is not a checkpoint";

  clock.Advance(1h);
  fs::create_directory(dir + "/step-20");
  ASSERT_TRUE((*watcher)->WaitForCheckpoints(dir, 2, kLongWait));
  EXPECT_EQ((*watcher)->LastCheckpoint(dir), clock.Now());

  clock.Advance(1h);
  std::ofstream(dir + "/step-20/shard-0") << "weights";
  ASSERT_TRUE((*watcher)->WaitForCheckpoints(dir, 3, kLongWait));
  EXPECT_EQ((*watcher)->LastCheckpoint(dir), clock.Now());
}

// One watcher follows every job's directory (more than the 128 inotify instances a user gets
// by default), each with its own checkpoints; an unwatched directory is forgotten.
TEST(CheckpointWatcherTest, FollowsHundredsOfDirectoriesEachOnItsOwn) {
  TempDir root;
  FakeClock clock;
  Result<std::unique_ptr<CheckpointWatcher>> watcher = CheckpointWatcher::Create(&clock);
  ASSERT_TRUE(watcher) << watcher.error().ToString();
  constexpr int kJobs = 300;
  for (int i = 0; i < kJobs; ++i) {
    ASSERT_TRUE((*watcher)->Watch(root.File("job-" + std::to_string(i))).ok()) << i;
  }
  ASSERT_TRUE((*watcher)->Watch(root.File("job-0")).ok()) << "watching again changes nothing";
  EXPECT_EQ((*watcher)->Watched().size(), static_cast<size_t>(kJobs));
  for (int i = 0; i < kJobs; i += 2) WriteAtomically(root.File("job-" + std::to_string(i)), "s");
  for (int i = 0; i < kJobs; ++i) {
    const std::string dir = root.File("job-" + std::to_string(i));
    if (i % 2 == 0) {
      ASSERT_TRUE((*watcher)->WaitForCheckpoints(dir, 1, kLongWait)) << i;
      EXPECT_EQ((*watcher)->LastCheckpoint(dir), clock.Now()) << i;
    } else {
      EXPECT_FALSE((*watcher)->LastCheckpoint(dir)) << i;
    }
  }
  (*watcher)->Unwatch(root.File("job-0"));
  EXPECT_EQ((*watcher)->Watched().size(), static_cast<size_t>(kJobs - 1));
  EXPECT_FALSE((*watcher)->LastCheckpoint(root.File("job-0")));
  // A later checkpoint there is not counted; the others' still are.
  WriteAtomically(root.File("job-0"), "later");
  WriteAtomically(root.File("job-1"), "s");
  ASSERT_TRUE((*watcher)->WaitForCheckpoints(root.File("job-1"), 1, kLongWait));
  EXPECT_EQ((*watcher)->checkpoints_seen(root.File("job-0")), 0u);
}

TEST(CheckpointWatcherTest, RemembersACheckpointWrittenBeforeItStarted) {
  TempDir root;
  FakeClock clock;
  const std::string dir = root.File("ckpt");
  fs::create_directories(dir);
  std::ofstream(dir + "/step-5.json") << "state";
  const auto written = fs::file_time_type::clock::now() - 10min;
  fs::last_write_time(dir + "/step-5.json", written);

  Result<std::unique_ptr<CheckpointWatcher>> watcher = CheckpointWatcher::Create(&clock);
  ASSERT_TRUE(watcher) << watcher.error().ToString();
  ASSERT_TRUE((*watcher)->Watch(dir).ok());
  std::optional<TimePoint> last = (*watcher)->LastCheckpoint(dir);
  ASSERT_TRUE(last);
  EXPECT_EQ(*last,
            std::chrono::time_point_cast<Duration>(std::chrono::file_clock::to_sys(written)));
  EXPECT_EQ((*watcher)->checkpoints_seen(dir), 0u);
}

}  // namespace
}  // namespace strata::node
