#include "node/supervisor_launch.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>

#include "node/pod_supervisor.h"

namespace strata::node {
namespace {

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

}  // namespace

Result<std::unique_ptr<SupervisorLaunch>> SupervisorLaunch::Spawn(const std::string& pod_dir,
                                                                  const std::string& log_path) {
  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return Err(InternalError(fmt::format("open {}: {}", log_path, std::strerror(errno))));
  }
  int sockets[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    Status failed = InternalError(fmt::format("socketpair: {}", std::strerror(errno)));
    close(log_fd);
    return Err(failed);
  }
  SpawnSetup setup;
  sigset_t none;
  sigemptyset(&none);
  sigset_t all_defaults;
  sigfillset(&all_defaults);
  sigdelset(&all_defaults, SIGKILL);
  sigdelset(&all_defaults, SIGSTOP);
  posix_spawnattr_setflags(&setup.attr_,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setsigmask(&setup.attr_, &none);
  posix_spawnattr_setsigdefault(&setup.attr_, &all_defaults);
  posix_spawn_file_actions_adddup2(&setup.actions_, sockets[1], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&setup.actions_, sockets[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&setup.actions_, log_fd, STDERR_FILENO);
  posix_spawn_file_actions_addclosefrom_np(&setup.actions_, STDERR_FILENO + 1);
  posix_spawn_file_actions_addchdir_np(&setup.actions_, pod_dir.c_str());
  std::vector<std::string> argv_strings = {"strata-pod-supervisor", pod_dir};
  std::vector<std::string> env_strings = SupervisorEnvironment(pod_dir);
  std::vector<char*> argv = CStrings(argv_strings);
  std::vector<char*> envp = CStrings(env_strings);
  pid_t pid = 0;
  // The running program is also the supervisor (pod_supervisor.h).
  int rc =
      posix_spawn(&pid, "/proc/self/exe", &setup.actions_, &setup.attr_, argv.data(), envp.data());
  close(sockets[1]);
  close(log_fd);
  if (rc != 0) {
    close(sockets[0]);
    return Err(
        InternalError(fmt::format("start the supervisor of {}: {}", pod_dir, std::strerror(rc))));
  }
  return std::unique_ptr<SupervisorLaunch>(new SupervisorLaunch(pid, sockets[0], log_path));
}

SupervisorLaunch::~SupervisorLaunch() {
  if (!settled_) Abandon();
  CloseControl();
}

Result<std::vector<StartedProcess>> SupervisorLaunch::StartProcesses(const SupervisorSpec& spec,
                                                                     Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
  if (!SendAll(control_fd_, EncodeSupervisorSpec(spec))) {
    return Err(InternalError(fmt::format("the pod's supervisor ended early; see {}", log_path_)));
  }
  std::optional<std::string> line = LineReader(control_fd_).Next(deadline);
  if (!line) {
    return Err(
        InternalError(fmt::format("the pod's supervisor did not report; see {}", log_path_)));
  }
  ASSIGN_OR_RETURN(SupervisorReport report, DecodeSupervisorReport(*line));
  if (!report.error.empty()) return Err(InvalidArgumentError(report.error));
  if (report.processes.size() != spec.processes.size()) {
    return Err(InternalError(fmt::format("the pod's supervisor reported {} processes of {}",
                                         report.processes.size(), spec.processes.size())));
  }
  return report.processes;
}

bool SupervisorLaunch::Commit() {
  settled_ = true;
  bool sent = SendAll(control_fd_, kSupervisorCommit);
  CloseControl();
  return sent;
}

void SupervisorLaunch::Abandon() {
  settled_ = true;
  // Without a commit a supervisor kills what it started; the group goes too, should it hang.
  CloseControl();
  kill(-pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

void SupervisorLaunch::CloseControl() {
  if (control_fd_ >= 0) close(control_fd_);
  control_fd_ = -1;
}

}  // namespace strata::node
