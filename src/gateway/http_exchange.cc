#include "gateway/http_exchange.h"

#include <array>

#include "gateway/openai_error.h"

namespace strata::gateway {
namespace {

constexpr Duration kConnectTimeout = std::chrono::seconds(2);

}  // namespace

asio::awaitable<bool> Respond(LoopSocket& client, int status, std::string_view body,
                              bool keep_alive, std::string_view content_type,
                              std::optional<int64_t> retry_after_seconds) {
  std::string head_bytes;
  HeadWriter head(head_bytes);
  head << "HTTP/1.1 " << status << " "
       << std::string_view(http::obsolete_reason(static_cast<http::status>(status)))
       << "\r\nContent-Type: " << content_type << "\r\nContent-Length: " << body.size() << "\r\n";
  if (retry_after_seconds) head << "Retry-After: " << *retry_after_seconds << "\r\n";
  head << (keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n");
  const std::array<asio::const_buffer, 2> response = {asio::buffer(head_bytes), asio::buffer(body)};
  co_return !co_await client.WriteAll(response);
}

asio::awaitable<bool> RespondError(LoopSocket& client, int status, std::string_view message,
                                   std::string_view code, bool keep_alive,
                                   std::optional<int64_t> retry_after_seconds,
                                   std::string_view param) {
  co_return co_await Respond(client, status, OpenAIErrorBody(status, message, param, code),
                             keep_alive, "application/json", retry_after_seconds);
}

bool IsHopByHop(std::string_view name) {
  // Expect too: the gateway sends a request's body with its head, having read it whole.
  static constexpr std::array<std::string_view, 10> kHopByHop = {
      "connection",    "keep-alive", "transfer-encoding", "te",    "upgrade", "proxy-authorization",
      "authorization", "host",       "content-length",    "expect"};
  for (std::string_view hop : kHopByHop) {
    if (net::EqualsIgnoreCase(name, hop)) return true;
  }
  return false;
}

asio::awaitable<bool> Exchange(UpstreamConnection& connection, const tcp::endpoint* connect_to,
                               const ClientRequest& request, std::string_view host,
                               size_t max_head_bytes, Duration timeout) {
  if (connect_to != nullptr) {
    connection.deadline.ExpiresAfter(kConnectTimeout);
    if (co_await connection.socket.Connect(*connect_to)) co_return false;
  }
  connection.deadline.ExpiresAfter(timeout);
  HeadWriter head(connection.head);
  head << request.head.method << " " << request.head.target << " HTTP/1.1\r\n";
  for (const auto& [name, value] : request.head.fields) {
    if (IsHopByHop(name)) continue;
    head << name << ": " << value << "\r\n";
  }
  head << "Host: " << host << "\r\nContent-Length: " << request.body.size() << "\r\n\r\n";
  const std::array<asio::const_buffer, 2> bytes = {asio::buffer(connection.head),
                                                   asio::buffer(request.body)};
  bool ok = !co_await connection.socket.WriteAll(bytes);
  while (ok) {
    auto parsed =
        net::ParseResponseHead(Contents(connection.buffer), max_head_bytes, &connection.response);
    if (!parsed) break;
    if (*parsed == net::ParseProgress::kDone) {
      if (!connection.response.interim()) {
        connection.deadline.ExpiresNever();  // the relay sets one per read
        co_return true;
      }
      connection.buffer.consume(connection.response.size);
      continue;
    }
    auto [error, n] = co_await connection.socket.ReadSome(
        connection.buffer.prepare(UpstreamConnection::kReadBytes));
    connection.buffer.commit(n);
    ok = !error;
  }
  connection.socket.Close();
  co_return false;
}

}  // namespace strata::gateway
