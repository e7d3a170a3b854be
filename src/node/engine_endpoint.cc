#include "node/engine_endpoint.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include "net/http_client.h"

namespace strata::node {
namespace {

// The port the kernel gives a socket bound to port 0 on every address, or an error.
Result<int> KernelPickedPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Err(InternalError(std::string("socket: ") + std::strerror(errno)));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof(address);
  int result = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  if (result == 0) result = getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  int error = errno;
  close(fd);
  if (result != 0)
    return Err(InternalError(std::string("picking a port: ") + std::strerror(error)));
  return static_cast<int>(ntohs(address.sin_port));
}

bool AnswersHealthy(int port, Duration timeout) {
  net::HttpClient client(net::HttpClientOptions{.connect_timeout = timeout,
                                                .idle_timeout = timeout,
                                                .max_response_bytes = 64 * 1024,
                                                .max_idle_connections_per_host = 0});
  net::HttpRequest request;
  request.target = "/health";
  Result<net::HttpResponse> response = client.Send("127.0.0.1", port, request);
  return response && response->status == 200;
}

}  // namespace

Result<int> PickFreePort(const std::set<int>& taken) {
  // The kernel hands out a different port almost every time; a few tries skip the taken ones.
  for (int attempt = 0; attempt < 64; ++attempt) {
    ASSIGN_OR_RETURN(int port, KernelPickedPort());
    if (taken.count(port) == 0) return port;
  }
  return Err(InternalError("no free TCP port found in 64 tries"));
}

std::set<int> ProbeHealth(const std::vector<int>& ports, Duration timeout) {
  std::mutex mu;
  std::set<int> healthy;
  std::vector<std::thread> probes;
  probes.reserve(ports.size());
  for (int port : ports) {
    probes.emplace_back([&, port] {
      if (!AnswersHealthy(port, timeout)) return;
      std::lock_guard<std::mutex> lock(mu);
      healthy.insert(port);
    });
  }
  for (std::thread& probe : probes) probe.join();
  return healthy;
}

}  // namespace strata::node
