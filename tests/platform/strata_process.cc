#include "strata_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "client/credentials.h"

namespace strata::platform_test {
namespace {

std::string EnvOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : fallback;
}

// fork + exec of `command` (found on PATH) with stdout and stderr on the given descriptors.
pid_t Spawn(const std::vector<std::string>& command, const std::vector<std::string>& env,
            int out_fd, int err_fd) {
  std::vector<std::string> argv_storage = command;
  std::vector<char*> argv;
  for (std::string& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    for (const std::string& entry : env) putenv(const_cast<char*>(entry.c_str()));
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// Reads everything from `fd` until end of file.
std::string ReadAll(int fd) {
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) out.append(buffer, static_cast<size_t>(n));
  return out;
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

}  // namespace

std::string StrataBinary() { return EnvOr("STRATA_BINARY_DIR", ".") + "/bin/strata"; }
std::string SourceDir() { return EnvOr("STRATA_SOURCE_DIR", "."); }

std::string AdminTokenFor(const std::string& url) {
  return client::FindCredential(client::CredentialsPath(), url).value_or("");
}

namespace {

std::vector<std::string> StrataCommand(const std::vector<std::string>& args) {
  std::vector<std::string> command = {StrataBinary()};
  command.insert(command.end(), args.begin(), args.end());
  return command;
}

}  // namespace

CommandResult RunStrata(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  return RunProgram(StrataCommand(args), env);
}

CommandResult RunProgram(const std::vector<std::string>& command,
                         const std::vector<std::string>& env) {
  int out_pipe[2];
  int err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return {};
  pid_t pid = Spawn(command, env, out_pipe[1], err_pipe[1]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  CommandResult result;
  // Both pipes are drained together so that neither side blocks on a full pipe.
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_pipes = 2;
  while (open_pipes > 0) {
    if (poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_pipes;
      } else {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = ExitCodeOf(status);
  return result;
}

UpProcess::~UpProcess() {
  if (pid_ > 0) Terminate();
  if (out_fd_ >= 0) close(out_fd_);
}

std::optional<std::string> UpProcess::Launch(const std::vector<std::string>& args,
                                             std::string_view marker, Duration timeout) {
  int out_pipe[2];
  if (pipe(out_pipe) != 0) return std::nullopt;
  pid_ = Spawn(StrataCommand(args), {}, out_pipe[1], out_pipe[1]);
  close(out_pipe[1]);
  out_fd_ = out_pipe[0];
  return WaitForLine(marker, timeout);
}

std::optional<std::string> UpProcess::WaitForLine(std::string_view marker, Duration timeout) {
  if (out_fd_ < 0) return std::nullopt;
  int timeout_ms =
      static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count());
  while (true) {
    size_t found = output_.find(marker);
    if (found != std::string::npos) {
      size_t end = output_.find('\n', found);
      if (end != std::string::npos) {
        return output_.substr(found + marker.size(), end - found - marker.size());
      }
    }
    pollfd fd = {out_fd_, POLLIN, 0};
    if (poll(&fd, 1, timeout_ms) <= 0) return std::nullopt;
    char buffer[4096];
    ssize_t n = read(out_fd_, buffer, sizeof(buffer));
    if (n <= 0) return std::nullopt;
    output_.append(buffer, static_cast<size_t>(n));
  }
}

bool UpProcess::Start(const std::vector<std::string>& args, Duration timeout) {
  std::vector<std::string> full = {"up"};
  full.insert(full.end(), args.begin(), args.end());
  std::optional<std::string> address = Launch(full, "API listening on http://", timeout);
  if (!address) return false;
  url_ = "http://" + *address;
  port_ = std::atoi(url_.substr(url_.rfind(':') + 1).c_str());
  return port_ > 0;
}

bool UpProcess::StartAgent(const std::vector<std::string>& args, Duration timeout) {
  std::vector<std::string> full = {"agent"};
  full.insert(full.end(), args.begin(), args.end());
  return Launch(full, "strata agent: joined ", timeout).has_value();
}

void UpProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

int UpProcess::Terminate() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  return WaitExit();
}

void UpProcess::Signal(int signal) {
  if (pid_ > 0) kill(pid_, signal);
}

int UpProcess::WaitExit() {
  if (pid_ <= 0) return -1;
  if (out_fd_ >= 0) output_ += ReadAll(out_fd_);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return ExitCodeOf(status);
}

}  // namespace strata::platform_test
