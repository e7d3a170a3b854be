#include "node/process_runtime.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <set>

#include "common/check.h"
#include "node/log_rotation.h"
#include "node/pod_state_file.h"
#include "node/proc_table.h"

namespace strata::node {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxUidLength = 128;
// After SIGKILL, how long to wait for the kernel to finish a process before looking again.
constexpr int kKillWaitMs = 5000;
// Bounds the SIGKILL sweep; each round kills everything found, so only a fork bomb outpaces it.
constexpr int kMaxKillRounds = 100;

// Debian 12's <sys/pidfd.h> declares these without C linkage, so call the kernel directly.
int PidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }
int PidfdSendSignal(int pidfd, int signal) {
  return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0));
}

// The pids that some ProcessRuntime of this process spawned and has not seen reaped: never
// strays, even for another runtime (tests run several; an agent runs one).
class SpawnedPids {
 public:
  static SpawnedPids& Instance() {
    static SpawnedPids* pids = new SpawnedPids();
    return *pids;
  }
  void Add(pid_t pid) {
    std::lock_guard lock(mu_);
    pids_.insert(pid);
  }
  void Remove(pid_t pid) {
    std::lock_guard lock(mu_);
    pids_.erase(pid);
  }
  bool Contains(pid_t pid) const {
    std::lock_guard lock(mu_);
    return pids_.contains(pid);
  }

 private:
  mutable std::mutex mu_;
  std::set<pid_t> pids_;
};

bool IsSafeName(std::string_view name) {
  return !name.empty() && name.size() <= kMaxUidLength && name != "." && name != ".." &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
         });
}

Status ValidateSpec(const PodSpec& spec) {
  if (!IsSafeName(spec.uid)) {
    return InvalidArgumentError(
        fmt::format("uid \"{}\" must be 1-128 characters of [A-Za-z0-9._-]", spec.uid));
  }
  if (spec.processes.empty()) return InvalidArgumentError("processes is empty");
  std::set<std::string_view> names;
  for (size_t i = 0; i < spec.processes.size(); ++i) {
    const ProcessSpec& process = spec.processes[i];
    if (!IsSafeName(process.name)) {
      return InvalidArgumentError(fmt::format(
          "processes[{}].name \"{}\" must be 1-128 characters of [A-Za-z0-9._-]", i, process.name));
    }
    if (!names.insert(process.name).second) {
      return InvalidArgumentError(
          fmt::format("processes[{}].name \"{}\" is used twice", i, process.name));
    }
    if (process.argv.empty() || process.argv[0].empty()) {
      return InvalidArgumentError(fmt::format("processes[{}].argv is empty", i));
    }
    for (size_t a = 0; a < process.argv.size(); ++a) {
      if (process.argv[a].find('\0') != std::string::npos) {
        return InvalidArgumentError(
            fmt::format("processes[{}].argv[{}] contains a NUL byte", i, a));
      }
    }
    for (const auto& [name, value] : process.env) {
      if (name.empty() || name.find_first_of(std::string_view("=\0", 2)) != std::string::npos ||
          value.find('\0') != std::string::npos) {
        return InvalidArgumentError(
            fmt::format("processes[{}].env[\"{}\"] is not a valid variable", i, name));
      }
    }
  }
  return Status::Ok();
}

// The "NAME=value" strings of a process's environment, with the runtime's own entries.
std::vector<std::string> BuildEnvironment(const PodSpec& pod, const ProcessSpec& process) {
  api::Environment env = process.env;
  if (!env.contains("CUDA_VISIBLE_DEVICES")) {
    env["CUDA_VISIBLE_DEVICES"] = fmt::format("{}", fmt::join(pod.gpu_indices, ","));
  }
  env[kPodUidVariable] = pod.uid;
  std::vector<std::string> entries;
  entries.reserve(env.size());
  for (const auto& [name, value] : env) entries.push_back(name + "=" + value);
  return entries;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// posix_spawn attributes and file actions, released on scope exit.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawnattr_init(&attr_);
    posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

// Starts one process in process group `pgid` (0: a new group led by the process).
Result<pid_t> SpawnProcess(const PodSpec& pod, const ProcessSpec& process, pid_t pgid, int log_fd,
                           const std::string& working_dir) {
  SpawnSetup setup;
  sigset_t none;
  sigemptyset(&none);
  sigset_t all_defaults;
  sigfillset(&all_defaults);
  sigdelset(&all_defaults, SIGKILL);
  sigdelset(&all_defaults, SIGSTOP);
  posix_spawnattr_setflags(&setup.attr_,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&setup.attr_, pgid);
  posix_spawnattr_setsigmask(&setup.attr_, &none);
  posix_spawnattr_setsigdefault(&setup.attr_, &all_defaults);
  posix_spawn_file_actions_addopen(&setup.actions_, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&setup.actions_, log_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&setup.actions_, log_fd, STDERR_FILENO);
  posix_spawn_file_actions_addclosefrom_np(&setup.actions_, STDERR_FILENO + 1);
  posix_spawn_file_actions_addchdir_np(&setup.actions_, working_dir.c_str());

  std::vector<std::string> argv_strings = process.argv;
  std::vector<std::string> env_strings = BuildEnvironment(pod, process);
  std::vector<char*> argv = CStrings(argv_strings);
  std::vector<char*> envp = CStrings(env_strings);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &setup.actions_, &setup.attr_, argv.data(), envp.data());
  if (rc != 0) {
    return Err(InvalidArgumentError(fmt::format("process \"{}\": cannot run \"{}\" in {}: {}",
                                                process.name, process.argv[0], working_dir,
                                                std::strerror(rc))));
  }
  return pid;
}

// Opens a pidfd for `pid` only if it is still the process that started at `start_time`.
int OpenVerifiedPidfd(pid_t pid, uint64_t start_time) {
  int pidfd = PidfdOpen(pid);
  if (pidfd < 0) return -1;
  std::optional<ProcInfo> info = ReadProcInfo(pid);
  if (!info || info->start_time != start_time) {
    close(pidfd);
    return -1;
  }
  return pidfd;
}

// Waits until every pidfd is readable (its process ended) or `timeout_ms` passes. Returns
// whether all ended.
bool WaitForPidfds(const std::vector<int>& pidfds, int timeout_ms) {
  std::vector<pollfd> fds;
  for (int fd : pidfds) fds.push_back({fd, POLLIN, 0});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    std::erase_if(fds, [](const pollfd& p) { return (p.revents & (POLLIN | POLLHUP)) != 0; });
    if (fds.empty()) return true;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    int n = poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (n < 0 && errno != EINTR) return false;
  }
}

}  // namespace

std::string_view ProcessStateName(ProcessState state) {
  switch (state) {
    case ProcessState::kRunning:
      return "running";
    case ProcessState::kExited:
      return "exited";
    case ProcessState::kLost:
      return "lost";
  }
  return "unknown";
}

bool PodStatus::Running() const {
  return std::any_of(processes.begin(), processes.end(),
                     [](const ProcessStatus& p) { return p.state == ProcessState::kRunning; });
}

bool PodStatus::Succeeded() const {
  return !processes.empty() && std::all_of(processes.begin(), processes.end(),
                                           [](const ProcessStatus& p) { return p.Succeeded(); });
}

Result<std::unique_ptr<ProcessRuntime>> ProcessRuntime::Create(Options options) {
  if (options.data_dir.empty()) return Err(InvalidArgumentError("data_dir is empty"));
  if (options.log_max_bytes <= 0 || options.log_keep < 1) {
    return Err(InvalidArgumentError("log_max_bytes must be > 0 and log_keep >= 1"));
  }
  std::unique_ptr<ProcessRuntime> runtime(new ProcessRuntime(std::move(options)));
  RETURN_IF_ERROR(runtime->Init());
  return runtime;
}

ProcessRuntime::ProcessRuntime(Options options) : options_(std::move(options)) {}

Status ProcessRuntime::Init() {
  std::error_code error;
  fs::create_directories(fs::path(options_.data_dir) / "pods", error);
  if (error) {
    return InternalError(fmt::format("create {}/pods: {}", options_.data_dir, error.message()));
  }
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    spdlog::warn(
        "PR_SET_CHILD_SUBREAPER failed ({}): double-forked pod processes are found "
        "only by their STRATA_POD_UID marker",
        std::strerror(errno));
  }
  cgroups_ = CgroupLimits::Probe(options_.cgroup_root);
  if (!cgroups_->enabled()) {
    static std::once_flag said_once;
    std::call_once(said_once, [this] { spdlog::warn("{}", cgroups_->reason()); });
  }
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    return InternalError(fmt::format("epoll/eventfd: {}", std::strerror(errno)));
  }
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = wake_fd_;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event) != 0) {
    return InternalError(fmt::format("epoll_ctl: {}", std::strerror(errno)));
  }
  supervisor_ = std::thread([this] { SuperviseLoop(); });
  return Status::Ok();
}

ProcessRuntime::~ProcessRuntime() {
  if (supervisor_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
    supervisor_.join();
  }
  for (const auto& [pidfd, watch] : watches_) close(pidfd);
  if (wake_fd_ >= 0) close(wake_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

std::string ProcessRuntime::PodDir(std::string_view uid) const {
  return fmt::format("{}/pods/{}", options_.data_dir, uid);
}

void ProcessRuntime::SuperviseLoop() {
  using std::chrono::steady_clock;
  auto next_rotation = steady_clock::now() + options_.log_check_interval;
  while (true) {
    auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(next_rotation - steady_clock::now());
    epoll_event events[16];
    int n = epoll_wait(epoll_fd_, events, 16, std::max<int>(0, wait.count()));
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_fd_) {
        uint64_t value;
        [[maybe_unused]] ssize_t r = read(wake_fd_, &value, sizeof value);
        std::lock_guard lock(mu_);
        if (stopping_) return;
        continue;
      }
      OnPidfdReadable(events[i].data.fd);
    }
    if (steady_clock::now() >= next_rotation) {
      RotateLogs();
      ReapStrays();
      next_rotation = steady_clock::now() + options_.log_check_interval;
    }
  }
}

void ProcessRuntime::OnPidfdReadable(int pidfd) {
  std::string uid;
  ProcessStatus ended;
  {
    std::lock_guard lock(mu_);
    auto watch = watches_.find(pidfd);
    if (watch == watches_.end()) return;
    Pod& pod = pods_.find(watch->second.uid)->second;
    ProcessStatus& process = pod.status.processes[watch->second.process_index];
    siginfo_t info{};
    int rc = waitid(P_PID, process.pid, &info, WEXITED | WNOHANG);
    if (rc == 0 && info.si_pid == 0) return;  // not finished after all
    if (rc == 0 && info.si_code == CLD_EXITED) {
      process.exit_code = info.si_status;
    } else if (rc == 0) {
      process.signal = info.si_status;  // CLD_KILLED or CLD_DUMPED
    }
    // rc < 0 (ECHILD): an adopted process whose parent is someone else; its status is theirs.
    process.state = ProcessState::kExited;
    SpawnedPids::Instance().Remove(process.pid);
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, pidfd, nullptr);
    close(pidfd);
    uid = watch->second.uid;
    watches_.erase(watch);
    PersistLocked(pod);
    ended = process;
  }
  exited_.notify_all();
  if (options_.on_exit) options_.on_exit(uid, ended);
}

void ProcessRuntime::WatchLocked(const std::string& uid, size_t index, int pidfd) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = pidfd;
  STRATA_CHECK(epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, pidfd, &event) == 0);
  watches_[pidfd] = Watch{uid, index};
}

void ProcessRuntime::PersistLocked(const Pod& pod) {
  Status status = WritePodStateFile(pod.state_path, pod.status);
  if (!status.ok()) spdlog::error("pod {}: {}", pod.status.uid, status.ToString());
}

Status ProcessRuntime::Start(const PodSpec& spec) {
  if (Status valid = ValidateSpec(spec); !valid.ok()) return valid;
  std::lock_guard lock(mu_);
  auto existing = pods_.find(spec.uid);
  if (existing != pods_.end() && existing->second.status.Running()) {
    return AlreadyExistsError(fmt::format("pod \"{}\" is running", spec.uid));
  }
  Pod pod;
  pod.status.uid = spec.uid;
  pod.state_path = PodDir(spec.uid) + "/state.json";
  if (Status spawned = SpawnPod(spec, &pod); !spawned.ok()) return spawned;
  if (existing != pods_.end()) pods_.erase(existing);
  auto [it, inserted] = pods_.emplace(spec.uid, std::move(pod));
  for (size_t i = 0; i < it->second.status.processes.size(); ++i) {
    const ProcessStatus& process = it->second.status.processes[i];
    int pidfd = PidfdOpen(process.pid);
    STRATA_CHECK(pidfd >= 0);  // our unreaped child: its pid cannot have been recycled
    WatchLocked(spec.uid, i, pidfd);
  }
  PersistLocked(it->second);
  return Status::Ok();
}

// REQUIRES: mu_ held (so the supervisor cannot reap the group leader while the group fills).
Status ProcessRuntime::SpawnPod(const PodSpec& spec, Pod* pod) {
  const std::string dir = PodDir(spec.uid);
  std::error_code error;
  fs::create_directories(dir + "/logs", error);
  if (error) return InternalError(fmt::format("create {}/logs: {}", dir, error.message()));
  if (cgroups_->enabled()) {
    Result<std::string> cgroup = cgroups_->CreatePodCgroup(spec.uid, spec.limits);
    if (!cgroup) return cgroup.error();
    pod->cgroup = *cgroup;
  }
  auto kill_started = [&] {
    // The group first, so that anything the started processes forked goes too; the group id
    // is still reserved because its members are not reaped yet.
    if (pod->status.pgid > 0) kill(-pod->status.pgid, SIGKILL);
    for (const ProcessStatus& started : pod->status.processes) {
      kill(started.pid, SIGKILL);
      waitpid(started.pid, nullptr, 0);
      SpawnedPids::Instance().Remove(started.pid);
    }
  };
  for (const ProcessSpec& process : spec.processes) {
    std::string log_path = fmt::format("{}/logs/{}.log", dir, process.name);
    int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      kill_started();
      return InternalError(fmt::format("open {}: {}", log_path, std::strerror(errno)));
    }
    const std::string working_dir = process.working_dir.empty() ? dir : process.working_dir;
    Result<pid_t> pid = SpawnProcess(spec, process, pod->status.pgid, log_fd, working_dir);
    close(log_fd);
    if (!pid) {
      kill_started();
      return pid.error();
    }
    SpawnedPids::Instance().Add(*pid);
    if (pod->status.pgid == 0) pod->status.pgid = *pid;
    ProcessStatus status;
    status.name = process.name;
    status.pid = *pid;
    std::optional<ProcInfo> info = ReadProcInfo(*pid);
    STRATA_CHECK(info.has_value());  // an unreaped child always has /proc/<pid>/stat
    status.start_time = info->start_time;
    status.log_path = log_path;
    pod->status.processes.push_back(std::move(status));
    if (!pod->cgroup.empty()) {
      if (Status added = cgroups_->AddProcess(pod->cgroup, *pid); !added.ok()) {
        kill_started();
        return added;
      }
    }
  }
  return Status::Ok();
}

Status ProcessRuntime::Stop(std::string_view uid, Duration grace) {
  pid_t pgid = 0;
  bool trust_group = false;
  {
    std::lock_guard lock(mu_);
    auto it = pods_.find(uid);
    if (it == pods_.end()) return NotFoundError(fmt::format("pod \"{}\" not found", uid));
    pgid = it->second.status.pgid;
    // While one of its processes is unreaped the group id cannot be reused, so everything in
    // the group is the pod's. Once all are gone only the marker is trustworthy.
    trust_group = it->second.status.Running();
  }
  TerminatePodProcesses(std::string(uid), pgid, trust_group, grace);
  std::unique_lock lock(mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end()) return Status::Ok();
  exited_.wait(lock, [&] { return !it->second.status.Running(); });
  if (!it->second.cgroup.empty()) cgroups_->KillAndRemove(it->second.cgroup);
  return Status::Ok();
}

void ProcessRuntime::TerminatePodProcesses(const std::string& uid, pid_t pgid, bool trust_group,
                                           Duration grace) {
  const pid_t group = trust_group ? pgid : 0;
  std::set<pid_t> signalled;
  auto signal_all = [&](int signal, std::vector<int>* pidfds) {
    for (const ProcInfo& info : FindPodProcesses(group, kPodUidVariable, uid)) {
      int pidfd = OpenVerifiedPidfd(info.pid, info.start_time);
      if (pidfd < 0) continue;  // ended meanwhile
      PidfdSendSignal(pidfd, signal);
      pidfds->push_back(pidfd);
      signalled.insert(info.pid);
    }
  };
  auto close_all = [](std::vector<int>* pidfds) {
    for (int fd : *pidfds) close(fd);
    pidfds->clear();
  };

  std::vector<int> pidfds;
  signal_all(SIGTERM, &pidfds);
  auto grace_ms = std::chrono::duration_cast<std::chrono::milliseconds>(grace).count();
  WaitForPidfds(pidfds, static_cast<int>(std::clamp<int64_t>(grace_ms, 0, INT32_MAX)));
  close_all(&pidfds);
  for (int round = 0; round < kMaxKillRounds; ++round) {
    signal_all(SIGKILL, &pidfds);
    if (pidfds.empty()) break;
    WaitForPidfds(pidfds, kKillWaitMs);
    close_all(&pidfds);
  }

  // Descendants reparented to us (we are a subreaper) are ours to reap; the pod's own
  // processes are reaped by the supervisor.
  std::set<pid_t> tracked;
  {
    std::lock_guard lock(mu_);
    auto it = pods_.find(uid);
    if (it != pods_.end()) {
      for (const ProcessStatus& process : it->second.status.processes) tracked.insert(process.pid);
    }
  }
  for (pid_t pid : signalled) {
    if (tracked.contains(pid)) continue;
    std::optional<ProcInfo> info = ReadProcInfo(pid);
    if (info && info->ppid == getpid()) waitpid(pid, nullptr, WNOHANG);
  }
}

Result<PodStatus> ProcessRuntime::GetStatus(std::string_view uid) const {
  std::lock_guard lock(mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end()) return Err(NotFoundError(fmt::format("pod \"{}\" not found", uid)));
  return it->second.status;
}

Result<Duration> ProcessRuntime::CpuTime(std::string_view uid) const {
  pid_t pgid = 0;
  std::string cgroup;
  {
    std::lock_guard lock(mu_);
    auto it = pods_.find(uid);
    if (it == pods_.end()) return Err(NotFoundError(fmt::format("pod \"{}\" not found", uid)));
    if (!it->second.status.Running()) {
      return Err(FailedPreconditionError(fmt::format("pod \"{}\" has no running process", uid)));
    }
    pgid = it->second.status.pgid;
    cgroup = it->second.cgroup;
  }
  if (!cgroup.empty()) return cgroups_->CpuUsage(cgroup);
  // One pass over /proc reading only stat files: by the group, not by the marker, whose search
  // reads every process's environment. (Should the pod's last process end right now, the
  // reading is of an empty group and the caller's next one sees the pod ended.)
  uint64_t ticks = 0;
  for (const ProcInfo& info : FindPodProcesses(pgid, "", "")) ticks += info.cpu_ticks;
  return TicksToDuration(ticks);
}

Result<PodStatus> ProcessRuntime::WaitForExit(std::string_view uid, Duration timeout) {
  std::unique_lock lock(mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end()) return Err(NotFoundError(fmt::format("pod \"{}\" not found", uid)));
  if (!exited_.wait_for(lock, timeout, [&] { return !it->second.status.Running(); })) {
    return Err(DeadlineExceededError(fmt::format("pod \"{}\" still running", uid)));
  }
  return it->second.status;
}

std::vector<PodStatus> ProcessRuntime::Adopt() {
  std::vector<PodStatus> adopted;
  std::error_code error;
  std::vector<std::string> state_files;
  for (const fs::directory_entry& entry :
       fs::directory_iterator(fs::path(options_.data_dir) / "pods", error)) {
    fs::path state = entry.path() / "state.json";
    if (fs::exists(state, error)) state_files.push_back(state.string());
  }
  std::sort(state_files.begin(), state_files.end());
  std::lock_guard lock(mu_);
  for (const std::string& path : state_files) {
    Result<PodStatus> recorded = ReadPodStateFile(path);
    if (!recorded) {
      spdlog::warn("not adopting: {}", recorded.error().ToString());
      continue;
    }
    if (pods_.contains(recorded->uid) || PodDir(recorded->uid) + "/state.json" != path) continue;
    Pod pod;
    pod.status = std::move(*recorded);
    pod.state_path = path;
    std::vector<std::pair<size_t, int>> to_watch;
    for (size_t i = 0; i < pod.status.processes.size(); ++i) {
      ProcessStatus& process = pod.status.processes[i];
      if (process.state != ProcessState::kRunning) continue;
      int pidfd = OpenVerifiedPidfd(process.pid, process.start_time);
      if (pidfd < 0) {
        process.state = ProcessState::kLost;
        continue;
      }
      to_watch.emplace_back(i, pidfd);
    }
    const std::string uid = pod.status.uid;
    auto [it, inserted] = pods_.emplace(uid, std::move(pod));
    for (const auto& [index, pidfd] : to_watch) WatchLocked(uid, index, pidfd);
    PersistLocked(it->second);
    adopted.push_back(it->second.status);
  }
  return adopted;
}

Status ProcessRuntime::Forget(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end()) return NotFoundError(fmt::format("pod \"{}\" not found", uid));
  if (it->second.status.Running()) {
    return FailedPreconditionError(fmt::format("pod \"{}\" is running", uid));
  }
  if (!it->second.cgroup.empty()) cgroups_->KillAndRemove(it->second.cgroup);
  std::error_code error;
  fs::remove(it->second.state_path, error);
  pods_.erase(it);
  return Status::Ok();
}

void ProcessRuntime::ReapStrays() {
  std::lock_guard lock(mu_);
  std::set<pid_t> supervised;  // includes adopted processes that were reparented to us
  for (const auto& [uid, pod] : pods_) {
    for (const ProcessStatus& process : pod.status.processes) supervised.insert(process.pid);
  }
  std::map<pid_t, uint64_t> alive;
  for (pid_t child : OwnChildren()) {
    if (supervised.contains(child) || SpawnedPids::Instance().Contains(child)) continue;
    std::optional<ProcInfo> info = ReadProcInfo(child);
    if (!info) continue;
    auto known = strays_.find(child);
    bool remembered = known != strays_.end() && known->second == info->start_time;
    if (info->state == 'Z') {
      if (remembered) waitpid(child, nullptr, WNOHANG);
    } else if (remembered || ProcessEnvValue(child, kPodUidVariable)) {
      alive[child] = info->start_time;
    }
  }
  strays_ = std::move(alive);
}

void ProcessRuntime::RotateLogs() {
  std::vector<std::string> logs;
  {
    std::lock_guard lock(mu_);
    for (const auto& [uid, pod] : pods_) {
      for (const ProcessStatus& process : pod.status.processes) {
        if (!process.log_path.empty()) logs.push_back(process.log_path);
      }
    }
  }
  for (const std::string& log : logs) {
    Result<bool> rotated = RotateLogIfLarger(log, options_.log_max_bytes, options_.log_keep);
    if (!rotated) spdlog::warn("log rotation: {}", rotated.error().ToString());
  }
}

}  // namespace strata::node
