#include "node/process_runtime.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/socket.h>
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

#include "common/atomic_file.h"
#include "common/check.h"
#include "node/log_rotation.h"
#include "node/pod_exit_record.h"
#include "node/pod_state_file.h"
#include "node/pod_supervisor_protocol.h"
#include "node/proc_table.h"
#include "node/supervisor_launch.h"

namespace strata::node {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxUidLength = 128;
// After SIGKILL, how long to wait for the kernel to finish a process before looking again.
constexpr int kKillWaitMs = 5000;
// Bounds the SIGKILL sweep; each round kills everything found, so only a fork bomb outpaces it.
constexpr int kMaxKillRounds = 100;
// How long a supervisor may take to start a pod's processes and say so.
constexpr Duration kSupervisorReportTimeout = std::chrono::seconds(60);

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
  inotify_fd_ = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (epoll_fd_ < 0 || wake_fd_ < 0 || inotify_fd_ < 0) {
    return InternalError(fmt::format("epoll/eventfd/inotify: {}", std::strerror(errno)));
  }
  for (int fd : {wake_fd_, inotify_fd_}) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
      return InternalError(fmt::format("epoll_ctl: {}", std::strerror(errno)));
    }
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
  if (inotify_fd_ >= 0) close(inotify_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

std::string ProcessRuntime::PodDir(std::string_view uid) const {
  return fmt::format("{}/pods/{}", options_.data_dir, uid);
}

Status ProcessRuntime::RenewLease(TimePoint valid_until) {
  return WriteLeaseFile(
      options_.data_dir + "/pods/lease",
      std::chrono::duration_cast<std::chrono::nanoseconds>(valid_until.time_since_epoch()).count());
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
      if (events[i].data.fd == inotify_fd_) {
        OnExitRecordsChanged();
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
  Ended ended;
  {
    std::lock_guard lock(mu_);
    auto watch = watches_.find(pidfd);
    if (watch == watches_.end()) return;
    const std::optional<size_t> index = watch->second.process_index;
    const pid_t pid = watch->second.pid;
    siginfo_t info{};
    int rc = waitid(P_PID, pid, &info, WEXITED | WNOHANG);
    if (rc == 0 && info.si_pid == 0) return;  // not finished after all
    SpawnedPids::Instance().Remove(pid);
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, pidfd, nullptr);
    close(pidfd);
    auto found = pods_.find(watch->second.uid);
    watches_.erase(watch);
    // A supervisor that outlived its pod's record by a moment (Forget, or a new Start of the
    // same uid): reaped above, nothing left to settle.
    if (found == pods_.end() || (!index && found->second.status.supervisor_pid != pid)) return;
    Pod& pod = found->second;
    if (!index) {
      OnSupervisorEndedLocked(pod, &ended);
    } else {
      // A process watched directly: its supervisor died before it. Its status is ours to read
      // when it was reparented to us; rc < 0 (ECHILD): someone else's, so unknown.
      ProcessStatus& process = pod.status.processes[*index];
      if (rc == 0 && info.si_code == CLD_EXITED) {
        process.exit_code = info.si_status;
      } else if (rc == 0) {
        process.signal = info.si_status;  // CLD_KILLED or CLD_DUMPED
      }
      process.state = ProcessState::kExited;
      process.end_time_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
      ended.emplace_back(pod.status.uid, process);
    }
    PersistLocked(pod);
  }
  exited_.notify_all();
  Report(ended);
}

void ProcessRuntime::OnExitRecordsChanged() {
  Ended ended;
  {
    std::lock_guard lock(mu_);
    alignas(inotify_event) char buffer[8192];
    ssize_t n;
    while ((n = read(inotify_fd_, buffer, sizeof buffer)) > 0) {
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        auto watch = exit_watches_.find(event->wd);
        if (watch == exit_watches_.end()) continue;
        if ((event->mask & IN_IGNORED) != 0) {
          exit_watches_.erase(watch);
          continue;
        }
        auto pod = pods_.find(watch->second);
        if (pod == pods_.end() || event->len == 0) continue;
        const std::string name = event->name;
        std::vector<ProcessStatus>& processes = pod->second.status.processes;
        for (size_t i = 0; i < processes.size(); ++i) {
          if (processes[i].name == name && ApplyExitRecordLocked(pod->second, i, &ended)) {
            PersistLocked(pod->second);
          }
        }
      }
    }
  }
  exited_.notify_all();
  Report(ended);
}

bool ProcessRuntime::ApplyExitRecordLocked(Pod& pod, size_t index, Ended* ended) {
  ProcessStatus& process = pod.status.processes[index];
  if (process.state != ProcessState::kRunning) return false;
  Result<ExitRecord> record = ReadExitRecord(pod.exits_dir, process.name);
  if (!record) {
    if (record.error().code() != StatusCode::kNotFound) {
      spdlog::warn("pod {}: {}", pod.status.uid, record.error().ToString());
    }
    return false;
  }
  process.state = ProcessState::kExited;
  process.exit_code = record->exit_code;
  process.signal = record->signal;
  process.end_time_ns = record->end_time_ns;
  process.fenced = record->fenced;
  ended->emplace_back(pod.status.uid, process);
  return true;
}

void ProcessRuntime::OnSupervisorEndedLocked(Pod& pod, Ended* ended) {
  UnwatchExitRecordsLocked(pod);
  for (size_t i = 0; i < pod.status.processes.size(); ++i) {
    ProcessStatus& process = pod.status.processes[i];
    if (process.state != ProcessState::kRunning || ApplyExitRecordLocked(pod, i, ended)) continue;
    // No record: the supervisor was killed before this process ended (or before it ran).
    int pidfd = OpenVerifiedPidfd(process.pid, process.start_time);
    if (pidfd >= 0) {
      WatchLocked(pod.status.uid, i, pidfd);
    } else {
      process.state = ProcessState::kExited;
      ended->emplace_back(pod.status.uid, process);
    }
  }
}

void ProcessRuntime::Report(const Ended& ended) {
  if (!options_.on_exit) return;
  for (const auto& [uid, process] : ended) options_.on_exit(uid, process);
}

void ProcessRuntime::WatchLocked(const std::string& uid, std::optional<size_t> index, int pidfd) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = pidfd;
  STRATA_CHECK(epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, pidfd, &event) == 0);
  const PodStatus& status = pods_.find(uid)->second.status;
  watches_[pidfd] = Watch{uid, index, index ? status.processes[*index].pid : status.supervisor_pid};
}

bool ProcessRuntime::WatchExitRecordsLocked(Pod& pod) {
  int wd = inotify_add_watch(inotify_fd_, pod.exits_dir.c_str(), IN_MOVED_TO);
  if (wd < 0) {
    spdlog::error("pod {}: inotify on {}: {}", pod.status.uid, pod.exits_dir, std::strerror(errno));
    return false;
  }
  pod.exits_watch = wd;
  exit_watches_[wd] = pod.status.uid;
  return true;
}

void ProcessRuntime::UnwatchExitRecordsLocked(Pod& pod) {
  if (pod.exits_watch < 0) return;
  inotify_rm_watch(inotify_fd_, pod.exits_watch);
  exit_watches_.erase(pod.exits_watch);
  pod.exits_watch = -1;
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
  pod.status.gpu_indices = spec.gpu_indices;
  pod.state_path = PodDir(spec.uid) + "/state.json";
  pod.exits_dir = ExitRecordDir(PodDir(spec.uid));
  Result<std::unique_ptr<SupervisorLaunch>> launch = SpawnPod(spec, &pod);
  if (!launch) return launch.error();
  if (existing != pods_.end()) {
    UnwatchExitRecordsLocked(existing->second);
    pods_.erase(existing);
  }
  auto [it, inserted] = pods_.emplace(spec.uid, std::move(pod));
  Pod& started = it->second;
  WatchExitRecordsLocked(started);
  int pidfd = PidfdOpen(started.status.supervisor_pid);
  STRATA_CHECK(pidfd >= 0);  // our unreaped child: its pid cannot have been recycled
  WatchLocked(spec.uid, std::nullopt, pidfd);
  // Recorded before the supervisor may go on: should this process die in between, the
  // supervisor kills the processes nobody knows about.
  PersistLocked(started);
  if (!(*launch)->Commit()) {
    spdlog::error("pod {}: the supervisor went away before the commit", spec.uid);
  }
  return Status::Ok();
}

// REQUIRES: mu_ held (so the supervisor's exit is handled after the pod is recorded).
Result<std::unique_ptr<SupervisorLaunch>> ProcessRuntime::SpawnPod(const PodSpec& spec, Pod* pod) {
  const std::string dir = PodDir(spec.uid);
  std::error_code error;
  fs::create_directories(dir + "/logs", error);
  if (!error) fs::remove_all(pod->exits_dir, error);  // a previous run's
  if (!error) fs::remove(AbandonedStartMarker(dir), error);
  if (!error) fs::create_directories(pod->exits_dir, error);
  if (error) return Err(InternalError(fmt::format("prepare {}: {}", dir, error.message())));
  if (!spec.name.empty()) {
    RETURN_IF_ERROR(
        ReplaceFileAtomically(dir + kPodNameSuffix, spec.name + "\n", 0600, FileSync::kNone));
  }
  SupervisorSpec supervised;
  const char* path = std::getenv("PATH");
  supervised.path = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  supervised.lease_file = options_.data_dir + "/pods/lease";
  for (const ProcessSpec& process : spec.processes) {
    supervised.processes.push_back({process.name, process.argv, BuildEnvironment(spec, process),
                                    process.working_dir.empty() ? dir : process.working_dir,
                                    fmt::format("{}/logs/{}.log", dir, process.name)});
  }
  if (spec.run_as) {
    supervised.uid = spec.run_as->uid;
    supervised.gid = spec.run_as->gid;
    // The pod's own directory is its working directory unless it names another; other pods'
    // users have no business in it.
    for (const std::string& owned : {dir, dir + "/logs"}) {
      if (chown(owned.c_str(), spec.run_as->uid, spec.run_as->gid) != 0 ||
          chmod(owned.c_str(), 0700) != 0) {
        return Err(InternalError(fmt::format("chown {}: {}", owned, std::strerror(errno))));
      }
    }
  }
  if (cgroups_->enabled()) {
    Result<std::string> cgroup = cgroups_->CreatePodCgroup(spec.uid, spec.limits);
    if (!cgroup) return Err(cgroup.error());
    pod->cgroup = *cgroup;
  }

  ASSIGN_OR_RETURN(std::unique_ptr<SupervisorLaunch> launch,
                   SupervisorLaunch::Spawn(dir, dir + "/supervisor.log"));
  const pid_t supervisor = launch->pid();
  if (!pod->cgroup.empty()) {
    // Before it starts anything, so that everything the pod runs is in the cgroup.
    RETURN_IF_ERROR(cgroups_->AddProcess(pod->cgroup, supervisor));
  }
  ASSIGN_OR_RETURN(std::vector<StartedProcess> started,
                   launch->StartProcesses(supervised, kSupervisorReportTimeout));
  std::optional<ProcInfo> info = ReadProcInfo(supervisor);
  STRATA_CHECK(info.has_value());  // an unreaped child always has /proc/<pid>/stat
  pod->status.pgid = supervisor;
  pod->status.supervisor_pid = supervisor;
  pod->status.supervisor_start_time = info->start_time;
  for (size_t i = 0; i < spec.processes.size(); ++i) {
    ProcessStatus status;
    status.name = spec.processes[i].name;
    status.pid = started[i].pid;
    status.start_time = started[i].start_time;
    status.log_path = supervised.processes[i].log_path;
    pod->status.processes.push_back(std::move(status));
  }
  return launch;
}

Status ProcessRuntime::Stop(std::string_view uid, Duration grace) {
  pid_t pgid = 0;
  bool trust_group = false;
  pid_t supervisor = 0;
  uint64_t supervisor_start_time = 0;
  {
    std::lock_guard lock(mu_);
    auto it = pods_.find(uid);
    if (it == pods_.end()) return NotFoundError(fmt::format("pod \"{}\" not found", uid));
    pgid = it->second.status.pgid;
    supervisor = it->second.status.supervisor_pid;
    supervisor_start_time = it->second.status.supervisor_start_time;
    // While one of its processes is unreaped the group id cannot be reused, so everything in
    // the group is the pod's. Once all are gone only the marker is trustworthy.
    trust_group = it->second.status.Running();
  }
  TerminatePodProcesses(std::string(uid), pgid, trust_group, supervisor, supervisor_start_time,
                        grace);
  std::unique_lock lock(mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end()) return Status::Ok();
  exited_.wait(lock, [&] { return !it->second.status.Running(); });
  if (!it->second.cgroup.empty()) cgroups_->KillAndRemove(it->second.cgroup);
  return Status::Ok();
}

void ProcessRuntime::TerminatePodProcesses(const std::string& uid, pid_t pgid, bool trust_group,
                                           pid_t supervisor, uint64_t supervisor_start_time,
                                           Duration grace) {
  const pid_t group = trust_group ? pgid : 0;
  std::set<pid_t> signalled;
  auto signal_all = [&](int signal, std::vector<int>* pidfds) {
    for (const ProcInfo& info : FindPodProcesses(group, kPodUidVariable, uid)) {
      if (info.pid == supervisor && info.start_time == supervisor_start_time) continue;
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
  // With its processes gone the supervisor records how they ended and exits; one that does not
  // (stopped, or stuck on a hung disk) is killed: the pod's end must not wait for it.
  if (int pidfd = supervisor > 0 ? OpenVerifiedPidfd(supervisor, supervisor_start_time) : -1;
      pidfd >= 0) {
    if (!WaitForPidfds({pidfd}, kKillWaitMs)) PidfdSendSignal(pidfd, SIGKILL);
    close(pidfd);
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
    const std::string uid = recorded->uid;
    if (fs::exists(AbandonedStartMarker(PodDir(uid)), error)) {
      // Recorded, then abandoned by its supervisor before the commit: it never ran as a pod.
      // Forgotten, it is started again like any pod this node has not started.
      spdlog::info("pod {}: its start was cut short when the node agent died; not adopted", uid);
      fs::remove(path, error);
      fs::remove_all(ExitRecordDir(PodDir(uid)), error);
      fs::remove(AbandonedStartMarker(PodDir(uid)), error);
      continue;
    }
    Pod& pod = pods_.emplace(uid, Pod{}).first->second;
    pod.status = std::move(*recorded);
    pod.state_path = path;
    pod.exits_dir = ExitRecordDir(PodDir(uid));
    const int supervisor =
        pod.status.supervisor_pid > 0
            ? OpenVerifiedPidfd(pod.status.supervisor_pid, pod.status.supervisor_start_time)
            : -1;
    if (supervisor >= 0) {
      // Records written from now on arrive through inotify; the ones before are read below.
      WatchExitRecordsLocked(pod);
      WatchLocked(uid, std::nullopt, supervisor);
    }
    Ended ended;  // the caller learns of these from the returned status
    for (size_t i = 0; i < pod.status.processes.size(); ++i) {
      ProcessStatus& process = pod.status.processes[i];
      if (process.state != ProcessState::kRunning || ApplyExitRecordLocked(pod, i, &ended) ||
          supervisor >= 0) {
        continue;
      }
      // No supervisor to record its end (killed, or a pod from before supervisors).
      int pidfd = OpenVerifiedPidfd(process.pid, process.start_time);
      if (pidfd < 0) {
        process.state = ProcessState::kLost;
      } else {
        WatchLocked(uid, i, pidfd);
      }
    }
    PersistLocked(pod);
    adopted.push_back(pod.status);
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
  UnwatchExitRecordsLocked(it->second);
  std::error_code error;
  fs::remove(it->second.state_path, error);
  fs::remove_all(it->second.exits_dir, error);
  fs::remove(AbandonedStartMarker(PodDir(uid)), error);
  pods_.erase(it);
  return Status::Ok();
}

void ProcessRuntime::ReapStrays() {
  std::lock_guard lock(mu_);
  std::set<pid_t> supervised;  // includes adopted processes that were reparented to us
  for (const auto& [uid, pod] : pods_) {
    for (const ProcessStatus& process : pod.status.processes) supervised.insert(process.pid);
    supervised.insert(pod.status.supervisor_pid);
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
