#include "engine_sim_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace strata::testing {

Result<EngineSimProcess> EngineSimProcess::Start(const std::string& model,
                                                 const std::vector<std::string>& extra_args) {
  const char* binary_dir = std::getenv("STRATA_BINARY_DIR");
  if (binary_dir == nullptr) return Err(FailedPreconditionError("STRATA_BINARY_DIR is not set"));
  std::string binary = std::string(binary_dir) + "/bin/strata";
  std::vector<std::string> args = {binary, "engine-sim", "--port", "0", "--model", model};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return Err(InternalError("pipe failed"));
  pid_t pid = fork();
  if (pid < 0) return Err(InternalError("fork failed"));
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string line;
  char c;
  while (read(pipe_fds[0], &c, 1) == 1 && c != '\n') line.push_back(c);
  EngineSimProcess process(pid, pipe_fds[0]);
  size_t colon = line.rfind(':');
  if (line.rfind("listening on ", 0) != 0 || colon == std::string::npos) {
    return Err(InternalError("engine-sim did not report its port; first line: \"" + line + "\""));
  }
  process.port_ = std::atoi(line.c_str() + colon + 1);
  return process;
}

EngineSimProcess::EngineSimProcess(EngineSimProcess&& other) noexcept
    : pid_(other.pid_), stdout_fd_(other.stdout_fd_), port_(other.port_) {
  other.pid_ = -1;
  other.stdout_fd_ = -1;
}

EngineSimProcess::~EngineSimProcess() {
  Stop();
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

int EngineSimProcess::Stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace strata::testing
