#include "node/probe_run.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>

#include "net/http_client.h"
#include "net/https_get.h"

namespace strata::node {
namespace {

constexpr size_t kMaxExecOutput = 10 * 1024;
constexpr size_t kMaxHttpResponse = 64 * 1024;

using SteadyTime = std::chrono::steady_clock::time_point;

// Milliseconds left until `deadline`, at least 0.
int MillisLeft(SteadyTime deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

ProbeResult HttpGet(const api::Probe& probe, const std::string& host, int port, Duration timeout) {
  net::HttpClient client(net::HttpClientOptions{.connect_timeout = timeout,
                                                .idle_timeout = timeout,
                                                .max_response_bytes = kMaxHttpResponse,
                                                .max_idle_connections_per_host = 0});
  net::HttpRequest request;
  request.target = probe.path;
  request.headers.emplace_back("User-Agent", "kube-probe/strata");
  for (const api::HttpHeader& header : probe.http_headers) {
    request.headers.emplace_back(header.name, header.value);
  }
  const bool https = probe.scheme == "HTTPS";
  Result<net::HttpResponse> response =
      https ? net::HttpsGetUnverified(host, port, request, timeout, kMaxHttpResponse)
            : client.Send(host, port, request);
  if (!response) {
    return {false, fmt::format("Get \"{}://{}:{}{}\": {}", https ? "https" : "http", host, port,
                               probe.path, response.error().message())};
  }
  if (response->status >= 200 && response->status < 400) return {true, ""};
  return {false, fmt::format("HTTP probe failed with statuscode: {}", response->status)};
}

ProbeResult TcpConnect(const std::string& host, int port, Duration timeout) {
  const std::string dial = fmt::format("dial tcp {}:{}", host, port);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return {false, fmt::format("{}: socket: {}", dial, std::strerror(errno))};
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) {
    close(fd);
    return {false, fmt::format("{}: not an IPv4 address", dial)};
  }
  int result = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  int error = result == 0 ? 0 : errno;
  if (error == EINPROGRESS) {
    pollfd waiting{fd, POLLOUT, 0};
    const int ready = poll(
        &waiting, 1,
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count()));
    if (ready == 0) {
      close(fd);
      return {false, dial + ": i/o timeout"};
    }
    socklen_t length = sizeof(error);
    if (ready < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
  }
  close(fd);
  if (error != 0) return {false, fmt::format("{}: connect: {}", dial, std::strerror(error))};
  return {true, ""};
}

// The program's path: as given when it has a '/', else the first executable of that name on
// the environment's PATH (or the standard one); empty when none is found.
std::string FindProgram(const std::string& name, const api::Environment& env) {
  if (name.find('/') != std::string::npos) return name;
  auto path = env.find("PATH");
  std::stringstream dirs(path != env.end() ? path->second : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

ProbeResult Exec(const api::Probe& probe, const ProbeTarget& target, Duration timeout) {
  std::string shown;
  for (const std::string& arg : probe.command) shown += (shown.empty() ? "" : " ") + arg;
  const std::string program = FindProgram(probe.command.front(), target.env);
  if (program.empty()) {
    return {false, fmt::format("command \"{}\": {}: not found", shown, probe.command.front())};
  }
  // Everything the child needs is made before fork: after it, only async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : target.env) env_strings.push_back(name + "=" + value);
  std::vector<char*> argv, envp;
  for (const std::string& arg : probe.command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  for (std::string& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return {false, fmt::format("command \"{}\": pipe: {}", shown, std::strerror(errno))};
  }
  const SteadyTime deadline = std::chrono::steady_clock::now() + timeout;
  pid_t pid = fork();
  if (pid < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return {false, fmt::format("command \"{}\": fork: {}", shown, std::strerror(errno))};
  }
  if (pid == 0) {
    setpgid(0, 0);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    if (target.run_as) {
      if (setgroups(0, nullptr) != 0 && errno != EPERM) _exit(126);
      if (setgid(target.run_as->gid) != 0 || setuid(target.run_as->uid) != 0) _exit(126);
    }
    if (!target.working_dir.empty() && chdir(target.working_dir.c_str()) != 0) _exit(126);
    execve(program.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string output;
  bool timed_out = false;
  for (;;) {
    pollfd readable{pipe_fds[0], POLLIN, 0};
    const int ready = poll(&readable, 1, MillisLeft(deadline));
    if (ready == 0) {
      timed_out = true;
      break;
    }
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    char buffer[4096];
    const ssize_t got = read(pipe_fds[0], buffer, sizeof(buffer));
    if (got <= 0) break;  // the command (and whatever it started) closed its output
    output.append(buffer, std::min(static_cast<size_t>(got),
                                   kMaxExecOutput - std::min(kMaxExecOutput, output.size())));
  }
  close(pipe_fds[0]);
  if (timed_out) kill(-pid, SIGKILL);
  int status = 0;
  // The output closes when the command ends; one that closed it early is waited for until the
  // deadline, then killed.
  while (!timed_out) {
    pid_t waited = waitpid(pid, &status, WNOHANG);
    if (waited == pid) break;
    if (waited < 0 && errno != EINTR) break;
    if (MillisLeft(deadline) == 0) {
      timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    usleep(1000);
  }
  if (timed_out) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return {false, fmt::format("command \"{}\" timed out", shown)};
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {true, ""};
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  if (!output.empty()) return {false, output};
  if (WIFEXITED(status)) {
    return {false, fmt::format("command \"{}\" exited with code {}", shown, WEXITSTATUS(status))};
  }
  return {false, fmt::format("command \"{}\" was killed by signal {}", shown, WTERMSIG(status))};
}

}  // namespace

ProbeResult RunProbe(const api::Probe& probe, const ProbeTarget& target) {
  const Duration timeout = std::chrono::seconds(probe.timeout_seconds);
  if (probe.action == api::ProbeAction::kExec) return Exec(probe, target, timeout);
  const int port = probe.port != 0 ? static_cast<int>(probe.port) : target.own_port;
  if (port == 0) return {false, "the probe names no port and the pod has none of its own"};
  if (probe.action == api::ProbeAction::kTcpSocket) return TcpConnect(target.host, port, timeout);
  return HttpGet(probe, target.host, port, timeout);
}

}  // namespace strata::node
