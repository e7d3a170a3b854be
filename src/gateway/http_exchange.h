#pragma once

// Internal to the gateway module: the HTTP/1.1 pieces the proxy is made of (complete answers,
// the upstream request head, buffered parsing, one request/response-header exchange with a
// replica), shared by the connection loop (proxy.cc) and the inference call.

#include <atomic>
#include <charconv>
#include <concepts>
#include <optional>
#include <string>
#include <string_view>

#include "gateway/server_impl.h"
#include "net/http_request_parser.h"
#include "net/http_response_parser.h"

namespace strata::gateway {

// One request read from a client: its head and its body, views into the connection's buffers
// that stay valid while the request is served. Plain data, made by the connection loop.
struct ClientRequest {
  const net::RequestHead& head;
  std::string_view body;
};

// Answers with a complete response, head and body in one write. Returns false when the client
// is gone.
asio::awaitable<bool> Respond(LoopSocket& client, int status, std::string_view body,
                              bool keep_alive, std::string_view content_type = "application/json",
                              std::optional<int64_t> retry_after_seconds = std::nullopt);

// Answers with OpenAI's error body (OpenAIErrorBody in gateway/openai_error.h: message, type
// following from the status, param, code; the empty ones null). Returns false when the client
// is gone.
asio::awaitable<bool> RespondError(LoopSocket& client, int status, std::string_view message,
                                   std::string_view code, bool keep_alive,
                                   std::optional<int64_t> retry_after_seconds = std::nullopt,
                                   std::string_view param = {});

// Whether the header field `name` concerns one connection only (or is one the gateway sets
// itself), so a proxy must not forward it.
bool IsHopByHop(std::string_view name);

// Decrements a counter when the request leaves, however it leaves.
struct CountGuard {
  explicit CountGuard(std::atomic<int64_t>& counter) : counter_(counter) { counter_.fetch_add(1); }
  ~CountGuard() { counter_.fetch_sub(1); }
  CountGuard(const CountGuard&) = delete;
  CountGuard& operator=(const CountGuard&) = delete;
  std::atomic<int64_t>& counter_;
};

// Writes an HTTP head into a string it clears first (whose capacity a caller may keep for the
// next head): text and numbers appended as they are, no format string to parse. Not
// thread-safe.
class HeadWriter {
 public:
  explicit HeadWriter(std::string& out) : out_(out) { out_.clear(); }
  HeadWriter& operator<<(std::string_view text) {
    out_.append(text);
    return *this;
  }
  template <std::integral Number>
  HeadWriter& operator<<(Number number) {
    char digits[24];
    out_.append(digits, std::to_chars(digits, digits + sizeof(digits), number).ptr);
    return *this;
  }

 private:
  std::string& out_;
};

// Connects (when `connect_to` is set; otherwise reuses the open `connection`), sends `request`
// to the replica `host` and reads the response head into `connection.response` (interim 1xx
// answers skipped). The replica gets the client's fields less the hop-by-hop ones, then its Host
// (HTTP/1.1 requires one; engines and Node's parser refuse requests without it) and the body's
// length. Returns false on any failure, a head that is not valid HTTP/1.1 or larger than
// `max_head_bytes` included (the connection is then closed).
asio::awaitable<bool> Exchange(UpstreamConnection& connection, const tcp::endpoint* connect_to,
                               const ClientRequest& request, std::string_view host,
                               size_t max_head_bytes, Duration timeout);

// The bytes `buffer` holds, as text.
inline std::string_view Contents(const beast::flat_buffer& buffer) {
  const auto data = buffer.data();
  return {static_cast<const char*>(data.data()), data.size()};
}

}  // namespace strata::gateway
