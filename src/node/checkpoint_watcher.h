#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace strata::node {

// Notices when training jobs write checkpoints into their $STRATA_CHECKPOINT_DIR and keeps the
// time of each directory's last one, which the scheduler uses to price preemption.
//
// inotify on each directory (and on the subdirectories created in it, one level, for
// checkpoints that are directories): a checkpoint is a file finished there (IN_CLOSE_WRITE) or
// moved into place (IN_MOVED_TO, the atomic write+rename idiom), or a directory created or
// moved in. Names starting with '.' or ending in ".tmp" or ".partial" are work in progress and
// ignored. The time recorded is `clock->Now()` when the event is read. When a directory is
// first watched, the newest modification time in it stands as its last checkpoint, so a
// restarted agent does not forget it.
//
// One inotify instance and one thread for every directory watched: a node may run hundreds of
// jobs, and the kernel allows a user 128 inotify instances by default
// (fs.inotify.max_user_instances) but many thousands of watches.
//
// Owned by the node agent; thread-safe.
class CheckpointWatcher {
 public:
  // Starts the watch thread. Internal when inotify or eventfd fails.
  // REQUIRES: clock outlives the watcher.
  static Result<std::unique_ptr<CheckpointWatcher>> Create(const Clock* clock);
  ~CheckpointWatcher();
  CheckpointWatcher(const CheckpointWatcher&) = delete;
  CheckpointWatcher& operator=(const CheckpointWatcher&) = delete;

  // Creates `dir` if needed and watches it; nothing when it is watched already. Internal naming
  // the directory when it cannot be made or watched.
  Status Watch(const std::string& dir);
  // Stops watching `dir` and forgets it; nothing when it is not watched.
  void Unwatch(const std::string& dir);
  // The directories watched, in order.
  std::vector<std::string> Watched() const;

  // When the last checkpoint in `dir` was seen; nullopt before the first or when `dir` is not
  // watched.
  std::optional<TimePoint> LastCheckpoint(const std::string& dir) const;

  // How many checkpoints were seen in `dir` since it was first watched (the one found then not
  // counted).
  uint64_t checkpoints_seen(const std::string& dir) const;

  // Blocks until checkpoints_seen(dir) >= count or `timeout` passes; returns whether it got
  // there.
  bool WaitForCheckpoints(const std::string& dir, uint64_t count, Duration timeout) const;

 private:
  // A directory watched: its checkpoints so far and its inotify watches (its own, and one per
  // subdirectory).
  struct Directory {
    int watch = -1;
    std::vector<int> subdirectory_watches;
    std::optional<TimePoint> last_checkpoint;
    uint64_t checkpoints_seen = 0;
  };
  // What an inotify watch belongs to.
  struct WatchTarget {
    std::string dir;  // the Directory's key
    bool top = true;  // the directory itself, not one of its subdirectories
  };

  explicit CheckpointWatcher(const Clock* clock) : clock_(clock) {}
  Status Init();
  void WatchLoop();
  // REQUIRES: called on the watch thread. Reads one batch of inotify events.
  void ReadEvents();
  // REQUIRES: mu_ held. Watches `path`, a subdirectory of `dir`.
  void AddSubdirectoryWatchLocked(const std::string& dir, const std::string& path);

  const Clock* clock_;
  int inotify_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;

  mutable std::mutex mu_;
  mutable std::condition_variable seen_;
  std::map<std::string, Directory> directories_;
  std::unordered_map<int, WatchTarget> watches_;
  bool stopping_ = false;
};

}  // namespace strata::node
