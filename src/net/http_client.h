#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "net/http_message.h"

namespace strata::net {

struct HttpClientOptions {
  Duration connect_timeout = std::chrono::seconds(5);
  // The longest wait for any progress (writing the request, or the next piece of the response).
  Duration idle_timeout = std::chrono::seconds(30);
  size_t max_response_bytes = 64 * 1024 * 1024;
  size_t max_idle_connections_per_host = 8;
};

// A blocking HTTP/1.1 client with a pool of kept-alive connections per host:port, for tests,
// tools and scraping. A connection is reused when the server kept it alive; a request on a
// reused connection that the server had already closed is retried once on a new one.
//
// Each call runs its own I/O to completion on the calling thread. Owned by its user; not
// thread-safe (one client per thread).
class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `request` to host:port and returns the whole response, whatever its status. A Host
  // header is added when missing. Errors: Unavailable when it cannot connect or the connection
  // breaks, DeadlineExceeded when no progress is made for idle_timeout, ResourceExhausted for a
  // body over max_response_bytes, Internal for a response that is not HTTP.
  Result<HttpResponse> Send(std::string_view host, int port, const HttpRequest& request);

  // Like Send, but hands the body to `on_data` piece by piece as it arrives (chunk framing
  // removed) and returns the response with an empty body. When `on_data` returns false, the
  // connection is closed at once, as a client that goes away; the response so far is returned.
  Result<HttpResponse> SendStreaming(std::string_view host, int port, const HttpRequest& request,
                                     const std::function<bool(std::string_view)>& on_data);

  // Kept-alive connections waiting in the pool, over all hosts.
  size_t IdleConnections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::net
