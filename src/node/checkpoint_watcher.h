#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "common/clock.h"
#include "common/status.h"

namespace strata::node {

// Notices when a training job writes a checkpoint into its $STRATA_CHECKPOINT_DIR and keeps the
// time of the last one, which the scheduler uses to price preemption.
//
// inotify on the directory (and on the subdirectories created in it, one level, for
// checkpoints that are directories): a checkpoint is a file finished there (IN_CLOSE_WRITE) or
// moved into place (IN_MOVED_TO, the atomic write+rename idiom), or a directory created or
// moved in. Names starting with '.' or ending in ".tmp" or ".partial" are work in progress and
// ignored. The time recorded is `clock->Now()` when the event is read. At creation, the newest
// modification time in the directory stands as the last checkpoint, so a restarted agent does
// not forget it.
//
// Owned by the node agent, one per training job with a checkpoint dir. Owns one thread that
// waits on the inotify descriptor; thread-safe.
class CheckpointWatcher {
 public:
  // Creates `dir` if needed and starts watching. Internal when inotify or the directory fails.
  // REQUIRES: clock outlives the watcher.
  static Result<std::unique_ptr<CheckpointWatcher>> Create(std::string dir, const Clock* clock);
  ~CheckpointWatcher();
  CheckpointWatcher(const CheckpointWatcher&) = delete;
  CheckpointWatcher& operator=(const CheckpointWatcher&) = delete;

  // When the last checkpoint was seen; nullopt before the first.
  std::optional<TimePoint> LastCheckpoint() const;

  // How many checkpoints were seen since creation (the one found at creation not counted).
  uint64_t checkpoints_seen() const;

  // Blocks until checkpoints_seen() >= count or `timeout` passes; returns whether it got there.
  bool WaitForCheckpoints(uint64_t count, Duration timeout) const;

  const std::string& dir() const { return dir_; }

 private:
  CheckpointWatcher(std::string dir, const Clock* clock);
  Status Init();
  void WatchLoop();
  // REQUIRES: called on the watch thread. Reads one batch of inotify events.
  void ReadEvents();
  void AddWatch(const std::string& path);

  const std::string dir_;
  const Clock* clock_;
  int inotify_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  std::unordered_map<int, std::string> watched_dirs_;  // watch descriptor -> path; thread only

  mutable std::mutex mu_;
  mutable std::condition_variable seen_;
  std::optional<TimePoint> last_checkpoint_;
  uint64_t checkpoints_seen_ = 0;
  bool stopping_ = false;
};

}  // namespace strata::node
