#include "node/pod_supervisor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "common/atomic_file.h"
#include "common/status.h"
#include "node/pod_exit_record.h"
#include "node/pod_supervisor_protocol.h"
#include "node/proc_table.h"

namespace strata::node {
namespace {

constexpr char kSupervisorVariable[] = "STRATA_POD_SUPERVISOR";
// How long fenced processes get between SIGTERM and SIGKILL.
constexpr int64_t kFenceGraceNs = int64_t{5} * 1000 * 1000 * 1000;

// Runs before main() in every program that links the runtime; only a supervisor (started with
// kSupervisorVariable set) goes no further. It touches no other static object, whose
// initialisation may not have happened yet.
__attribute__((constructor)) void RunAsPodSupervisorWhenAsked() {
  const char* pod_dir = std::getenv(kSupervisorVariable);
  if (pod_dir == nullptr) return;
  std::_Exit(RunPodSupervisor(pod_dir));
}

// What went wrong in a forked worker before its program ran.
enum class ChildStep : int { kChdir = 1, kIdentity = 2, kExec = 3 };

// Starts one worker (a child of this process, in its process group) and returns its pid, or
// why it could not start.
Result<pid_t> StartWorker(const SupervisedProcess& process, const SupervisorSpec& spec) {
  int log_fd = open(process.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return Err(InternalError(fmt::format("open {}: {}", process.log_path, std::strerror(errno))));
  }
  if (spec.uid && fchown(log_fd, *spec.uid, spec.gid.value_or(-1)) != 0) {
    close(log_fd);
    return Err(InternalError(fmt::format("chown {}: {}", process.log_path, std::strerror(errno))));
  }
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    close(log_fd);
    return Err(InternalError(fmt::format("pipe: {}", std::strerror(errno))));
  }
  std::vector<std::string> argv_strings = process.argv;
  std::vector<std::string> env_strings = process.env;
  std::vector<char*> argv = CStrings(argv_strings);
  std::vector<char*> envp = CStrings(env_strings);
  pid_t pid = fork();
  if (pid == 0) {
    auto fail = [&](ChildStep step) {
      int message[2] = {static_cast<int>(step), errno};
      [[maybe_unused]] ssize_t n = write(error_pipe[1], message, sizeof message);
      _exit(127);
    };
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int number = 1; number < NSIG; ++number) std::signal(number, SIG_DFL);
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    dup2(null_fd, STDIN_FILENO);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    if (chdir(process.working_dir.c_str()) != 0) fail(ChildStep::kChdir);
    if (spec.gid && (setgroups(0, nullptr) != 0 || setgid(*spec.gid) != 0)) {
      fail(ChildStep::kIdentity);
    }
    if (spec.uid && setuid(*spec.uid) != 0) fail(ChildStep::kIdentity);
    execvpe(argv[0], argv.data(), envp.data());
    fail(ChildStep::kExec);
  }
  int fork_errno = errno;
  close(error_pipe[1]);
  close(log_fd);
  if (pid < 0) {
    close(error_pipe[0]);
    return Err(InternalError(fmt::format("fork: {}", std::strerror(fork_errno))));
  }
  int message[2] = {0, 0};
  ssize_t n;
  do {
    n = read(error_pipe[0], message, sizeof message);
  } while (n < 0 && errno == EINTR);
  close(error_pipe[0]);
  if (n != static_cast<ssize_t>(sizeof message)) return pid;  // exec succeeded
  waitpid(pid, nullptr, 0);
  if (static_cast<ChildStep>(message[0]) == ChildStep::kIdentity) {
    return Err(InvalidArgumentError(fmt::format(
        "process \"{}\": cannot run as uid {} gid {}: {}", process.name,
        spec.uid.value_or(getuid()), spec.gid.value_or(getgid()), std::strerror(message[1]))));
  }
  return Err(InvalidArgumentError(fmt::format("process \"{}\": cannot run \"{}\" in {}: {}",
                                              process.name, process.argv[0], process.working_dir,
                                              std::strerror(message[1]))));
}

void KillAndReap(const std::map<pid_t, std::string>& workers) {
  for (const auto& [pid, name] : workers) kill(pid, SIGKILL);
  for (const auto& [pid, name] : workers) waitpid(pid, nullptr, 0);
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::vector<std::string> SupervisorEnvironment(const std::string& pod_dir) {
  return {std::string(kSupervisorVariable) + "=" + pod_dir};
}

int RunPodSupervisor(const std::string& pod_dir) {
  for (int number : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2}) {
    std::signal(number, SIG_IGN);
  }
  LineReader input(STDIN_FILENO);
  std::optional<std::string> line = input.Next();
  if (!line) return 2;
  Result<SupervisorSpec> spec = DecodeSupervisorSpec(*line);
  if (!spec) {
    SendAll(STDOUT_FILENO,
            EncodeSupervisorReport({.error = spec.error().message(), .processes = {}}));
    return 2;
  }
  setenv("PATH", spec->path.c_str(), 1);  // execvpe looks programs up in our own PATH

  std::map<pid_t, std::string> workers;  // pid -> process name
  SupervisorReport report;
  for (const SupervisedProcess& process : spec->processes) {
    Result<pid_t> pid = StartWorker(process, *spec);
    if (!pid) {
      KillAndReap(workers);
      SendAll(STDOUT_FILENO,
              EncodeSupervisorReport({.error = pid.error().message(), .processes = {}}));
      return 1;
    }
    workers[*pid] = process.name;
    std::optional<ProcInfo> info = ReadProcInfo(*pid);  // unreaped: /proc/<pid> stays
    report.processes.push_back({*pid, info ? info->start_time : 0});
  }
  SendAll(STDOUT_FILENO, EncodeSupervisorReport(report));
  std::optional<std::string> commit = input.Next();
  if (!commit || *commit + "\n" != kSupervisorCommit) {
    // The runtime died (or gave up) before it committed: nobody may know these. Said first, so
    // that a runtime that had recorded the pod and adopts it later starts it again instead of
    // counting these deaths as its failure.
    if (Status marked = ReplaceFileAtomically(
            AbandonedStartMarker(pod_dir),
            "the node agent died before it committed this start; the supervisor stopped what it "
            "had started\n",
            0644);
        !marked.ok()) {
      std::fprintf(stderr, "%s\n", marked.ToString().c_str());
    }
    KillAndReap(workers);
    return 1;
  }
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  dup2(null_fd, STDIN_FILENO);
  dup2(null_fd, STDOUT_FILENO);
  close(null_fd);

  const std::string exits = ExitRecordDir(pod_dir);
  // SIGCHLD stays blocked and is waited for with a timeout, so that the lease is looked at
  // while the workers run; workers start with nothing blocked.
  sigset_t child_signal;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  sigprocmask(SIG_BLOCK, &child_signal, nullptr);
  std::optional<int64_t> fenced_at;  // when the lease was found lapsed
  while (!workers.empty()) {
    siginfo_t info{};
    while (!workers.empty() && waitid(P_ALL, 0, &info, WEXITED | WNOHANG) == 0 &&
           info.si_pid != 0) {
      auto worker = workers.find(info.si_pid);
      if (worker == workers.end()) continue;
      ExitRecord record;
      if (info.si_code == CLD_EXITED) {
        record.exit_code = info.si_status;
      } else {
        record.signal = info.si_status;
      }
      record.end_time_ns = NowNs();
      record.fenced = fenced_at.has_value();
      if (Status written = WriteExitRecord(exits, worker->second, record); !written.ok()) {
        std::fprintf(stderr, "%s\n", written.ToString().c_str());
      }
      workers.erase(worker);
      info = {};
    }
    if (workers.empty()) break;
    const int64_t now = NowNs();
    std::optional<int64_t> lease =
        spec->lease_file.empty() ? std::nullopt : ReadLeaseFile(spec->lease_file);
    if (!fenced_at && lease && now > *lease) {
      fenced_at = now;
      std::fprintf(stderr,
                   "fencing: the node's lease lapsed %.1f s ago (its agent lost the control "
                   "plane); stopping the pod's processes\n",
                   static_cast<double>(now - *lease) / 1e9);
      // The whole process group (what the workers started too); we ignore SIGTERM.
      kill(-getpgrp(), SIGTERM);
    }
    if (fenced_at && now - *fenced_at > kFenceGraceNs) {
      for (const ProcInfo& process : FindPodProcesses(getpgrp(), "", "")) {
        kill(process.pid, SIGKILL);  // every one but this process
      }
    }
    const timespec tick{1, 0};
    sigtimedwait(&child_signal, nullptr, &tick);
  }
  return 0;
}

}  // namespace strata::node
