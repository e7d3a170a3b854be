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

Result<std::unique_ptr<CheckpointWatcher>> CheckpointWatcher::Create(std::string dir,
                                                                     const Clock* clock) {
  std::unique_ptr<CheckpointWatcher> watcher(new CheckpointWatcher(std::move(dir), clock));
  RETURN_IF_ERROR(watcher->Init());
  return watcher;
}

CheckpointWatcher::CheckpointWatcher(std::string dir, const Clock* clock)
    : dir_(std::move(dir)), clock_(clock) {}

Status CheckpointWatcher::Init() {
  std::error_code error;
  fs::create_directories(dir_, error);
  if (error) return InternalError(fmt::format("create {}: {}", dir_, error.message()));
  inotify_fd_ = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (inotify_fd_ < 0 || wake_fd_ < 0) {
    return InternalError(fmt::format("inotify/eventfd: {}", std::strerror(errno)));
  }
  if (inotify_add_watch(inotify_fd_, dir_.c_str(), kEvents) < 0) {
    return InternalError(fmt::format("watch {}: {}", dir_, std::strerror(errno)));
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(dir_, error)) {
    if (entry.is_directory(error)) AddWatch(entry.path().string());
  }
  last_checkpoint_ = NewestModification(dir_);
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

void CheckpointWatcher::AddWatch(const std::string& path) {
  int wd = inotify_add_watch(inotify_fd_, path.c_str(), kEvents);
  if (wd >= 0) watched_dirs_[wd] = path;
}

void CheckpointWatcher::WatchLoop() {
  while (true) {
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) {
      spdlog::error("checkpoint watch on {} stopped: {}", dir_, std::strerror(errno));
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
  uint64_t checkpoints = 0;
  for (char* cursor = buffer; cursor < buffer + n;) {
    const auto* event = reinterpret_cast<const inotify_event*>(cursor);
    cursor += sizeof(inotify_event) + event->len;
    std::string_view name = event->len > 0 ? std::string_view(event->name) : "";
    if (IsWorkInProgress(name)) continue;
    bool is_dir = (event->mask & IN_ISDIR) != 0;
    if (is_dir && event->wd >= 0 && (event->mask & (IN_CREATE | IN_MOVED_TO)) != 0) {
      // Only the top directory's watch is missing from watched_dirs_: watch one level down.
      if (!watched_dirs_.contains(event->wd)) AddWatch(fmt::format("{}/{}", dir_, name));
    }
    // A plain file created is still being written; it counts when closed or renamed in.
    if ((event->mask & IN_CREATE) != 0 && !is_dir) continue;
    ++checkpoints;
  }
  if (checkpoints == 0) return;
  {
    std::lock_guard lock(mu_);
    last_checkpoint_ = clock_->Now();
    checkpoints_seen_ += checkpoints;
  }
  seen_.notify_all();
}

std::optional<TimePoint> CheckpointWatcher::LastCheckpoint() const {
  std::lock_guard lock(mu_);
  return last_checkpoint_;
}

uint64_t CheckpointWatcher::checkpoints_seen() const {
  std::lock_guard lock(mu_);
  return checkpoints_seen_;
}

bool CheckpointWatcher::WaitForCheckpoints(uint64_t count, Duration timeout) const {
  std::unique_lock lock(mu_);
  return seen_.wait_for(lock, timeout, [&] { return checkpoints_seen_ >= count; });
}

}  // namespace strata::node
