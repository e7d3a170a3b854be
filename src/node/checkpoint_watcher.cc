#include "node/checkpoint_watcher.h"

#include <fmt/format.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

namespace strata::node {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kEvents = IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE;

bool IsWorkInProgress(std::string_view name) {
  return name.empty() || name.front() == '.' || name.ends_with(".tmp") ||
         name.ends_with(".partial");
}

// The newest modification time among the directory's entries (one level down too).
std::optional<TimePoint> NewestModification(const std::string& dir) {
  std::optional<TimePoint> newest;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(dir, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it.depth() > 1 || IsWorkInProgress(it->path().filename().string())) continue;
    fs::file_time_type written = it->last_write_time(error);
    if (error) continue;
    auto system = std::chrono::file_clock::to_sys(written);
    TimePoint time = std::chrono::time_point_cast<Duration>(system);
    if (!newest || time > *newest) newest = time;
  }
  return newest;
}

}  // namespace

Result<std::unique_ptr<CheckpointWatcher>> CheckpointWatcher::Create(const Clock* clock) {
  std::unique_ptr<CheckpointWatcher> watcher(new CheckpointWatcher(clock));
  RETURN_IF_ERROR(watcher->Init());
  return watcher;
}

Status CheckpointWatcher::Init() {
  inotify_fd_ = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (inotify_fd_ < 0 || wake_fd_ < 0) {
    return InternalError(fmt::format("inotify/eventfd: {}", std::strerror(errno)));
  }
  thread_ = std::thread([this] { WatchLoop(); });
  return Status::Ok();
}

CheckpointWatcher::~CheckpointWatcher() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
    thread_.join();
  }
  if (inotify_fd_ >= 0) close(inotify_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

Status CheckpointWatcher::Watch(const std::string& dir) {
  std::lock_guard lock(mu_);
  if (directories_.contains(dir)) return Status::Ok();
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return InternalError(fmt::format("create {}: {}", dir, error.message()));
  const int watch = inotify_add_watch(inotify_fd_, dir.c_str(), kEvents);
  if (watch < 0) return InternalError(fmt::format("watch {}: {}", dir, std::strerror(errno)));
  Directory& directory = directories_[dir];
  directory.watch = watch;
  watches_[watch] = {dir, true};
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    if (entry.is_directory(error)) AddSubdirectoryWatchLocked(dir, entry.path().string());
  }
  directory.last_checkpoint = NewestModification(dir);
  return Status::Ok();
}

void CheckpointWatcher::Unwatch(const std::string& dir) {
  std::lock_guard lock(mu_);
  auto it = directories_.find(dir);
  if (it == directories_.end()) return;
  for (int watch : it->second.subdirectory_watches) {
    inotify_rm_watch(inotify_fd_, watch);
    watches_.erase(watch);
  }
  inotify_rm_watch(inotify_fd_, it->second.watch);
  watches_.erase(it->second.watch);
  directories_.erase(it);
}

std::vector<std::string> CheckpointWatcher::Watched() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> dirs;
  for (const auto& [dir, directory] : directories_) dirs.push_back(dir);
  return dirs;
}

void CheckpointWatcher::AddSubdirectoryWatchLocked(const std::string& dir,
                                                   const std::string& path) {
  const int watch = inotify_add_watch(inotify_fd_, path.c_str(), kEvents);
  if (watch < 0) return;
  // The kernel gives a path it watches already the same descriptor again.
  if (watches_.emplace(watch, WatchTarget{dir, false}).second) {
    directories_[dir].subdirectory_watches.push_back(watch);
  }
}

void CheckpointWatcher::WatchLoop() {
  while (true) {
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) {
      spdlog::error("checkpoint watch stopped: {}", std::strerror(errno));
      return;
    }
    if (fds[1].revents != 0) {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    if (fds[0].revents != 0) ReadEvents();
  }
}

void CheckpointWatcher::ReadEvents() {
  alignas(inotify_event) char buffer[16 * 1024];
  ssize_t n = read(inotify_fd_, buffer, sizeof buffer);
  if (n <= 0) return;
  bool seen = false;
  {
    std::lock_guard lock(mu_);
    const TimePoint now = clock_->Now();
    for (char* cursor = buffer; cursor < buffer + n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(cursor);
      cursor += sizeof(inotify_event) + event->len;
      // A watch removed by Unwatch (or whose directory went away) may still have events queued.
      auto target = watches_.find(event->wd);
      if (target == watches_.end()) continue;
      std::string_view name = event->len > 0 ? std::string_view(event->name) : "";
      if (IsWorkInProgress(name)) continue;
      const std::string dir = target->second.dir;
      const bool is_dir = (event->mask & IN_ISDIR) != 0;
      if (is_dir && target->second.top && (event->mask & (IN_CREATE | IN_MOVED_TO)) != 0) {
        AddSubdirectoryWatchLocked(dir, fmt::format("{}/{}", dir, name));
      }
      // A plain file created is still being written; it counts when closed or renamed in.
      if ((event->mask & IN_CREATE) != 0 && !is_dir) continue;
      Directory& directory = directories_[dir];
      directory.last_checkpoint = now;
      ++directory.checkpoints_seen;
      seen = true;
    }
  }
  if (seen) seen_.notify_all();
}

std::optional<TimePoint> CheckpointWatcher::LastCheckpoint(const std::string& dir) const {
  std::lock_guard lock(mu_);
  auto it = directories_.find(dir);
  return it == directories_.end() ? std::nullopt : it->second.last_checkpoint;
}

uint64_t CheckpointWatcher::checkpoints_seen(const std::string& dir) const {
  std::lock_guard lock(mu_);
  auto it = directories_.find(dir);
  return it == directories_.end() ? 0 : it->second.checkpoints_seen;
}

bool CheckpointWatcher::WaitForCheckpoints(const std::string& dir, uint64_t count,
                                           Duration timeout) const {
  std::unique_lock lock(mu_);
  return seen_.wait_for(lock, timeout, [&] {
    auto it = directories_.find(dir);
    return it != directories_.end() && it->second.checkpoints_seen >= count;
  });
}

}  // namespace strata::node
