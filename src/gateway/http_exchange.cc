#include "gateway/http_exchange.h"

#include <fmt/format.h>

#include <array>
#include <nlohmann/json.hpp>

namespace strata::gateway {
namespace {

constexpr Duration kConnectTimeout = std::chrono::seconds(2);

std::string ErrorBody(std::string_view message, std::string_view type, std::string_view code) {
  return nlohmann::json{{"error", {{"message", message}, {"type", type}, {"code", code}}}}.dump();
}

std::string_view ErrorType(int status) {
  if (status == 401) return "authentication_error";
  if (status == 429) return "rate_limit_exceeded";
  if (status == 503) return "service_unavailable";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

}  // namespace

asio::awaitable<bool> Respond(tcp::socket& client, int status, std::string_view body,
                              bool keep_alive, std::string_view content_type,
                              std::optional<int64_t> retry_after_seconds) {
  fmt::memory_buffer head;
  auto out = std::back_inserter(head);
  fmt::format_to(out, "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n", status,
                 std::string_view(http::obsolete_reason(static_cast<http::status>(status))),
                 content_type, body.size());
  if (retry_after_seconds) fmt::format_to(out, "Retry-After: {}\r\n", *retry_after_seconds);
  fmt::format_to(out, "{}",
                 keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n");
  const std::array<asio::const_buffer, 2> response = {asio::buffer(head.data(), head.size()),
                                                      asio::buffer(body)};
  co_return !co_await WriteAll(client, response);
}

asio::awaitable<bool> RespondError(tcp::socket& client, int status, std::string_view message,
                                   std::string_view code, bool keep_alive,
                                   std::optional<int64_t> retry_after_seconds) {
  co_return co_await Respond(client, status, ErrorBody(message, ErrorType(status), code),
                             keep_alive, "application/json", retry_after_seconds);
}

bool IsHopByHop(std::string_view name) {
  static constexpr std::array<std::string_view, 9> kHopByHop = {
      "connection",    "keep-alive", "transfer-encoding", "te", "upgrade", "proxy-authorization",
      "authorization", "host",       "content-length"};
  for (std::string_view hop : kHopByHop) {
    if (beast::iequals(name, hop)) return true;
  }
  return false;
}

std::string UpstreamHead(const ClientRequest& request, std::string_view host) {
  fmt::memory_buffer head;
  auto out = std::back_inserter(head);
  fmt::format_to(out, "{} {} HTTP/1.1\r\n", request.head.method, request.head.target);
  for (const auto& [name, value] : request.head.fields) {
    if (IsHopByHop(name)) continue;
    fmt::format_to(out, "{}: {}\r\n", name, value);
  }
  fmt::format_to(out, "Host: {}\r\nContent-Length: {}\r\n\r\n", host, request.body.size());
  return fmt::to_string(head);
}

asio::awaitable<bool> Exchange(UpstreamConnection& connection, const tcp::endpoint* connect_to,
                               std::string_view head, std::string_view body,
                               http::response_parser<http::buffer_body>& parser, Duration timeout) {
  if (connect_to != nullptr) {
    connection.deadline.ExpiresAfter(kConnectTimeout);
    auto [ec] = co_await connection.socket.async_connect(*connect_to, kAsTuple);
    if (ec) co_return false;
    connection.socket.set_option(tcp::no_delay(true), ec);
    if (!ec) connection.socket.non_blocking(true, ec);  // for WriteAll
    if (ec) co_return false;
  }
  connection.deadline.ExpiresAfter(timeout);
  const std::array<asio::const_buffer, 2> request = {asio::buffer(head), asio::buffer(body)};
  if (!co_await WriteAll(connection.socket, request)) {
    auto [read_ec, read] =
        co_await http::async_read_header(connection.socket, connection.buffer, parser, kAsTuple);
    if (!read_ec) {
      connection.deadline.ExpiresNever();  // the relay sets one per read
      co_return true;
    }
  }
  boost::system::error_code ignored;
  connection.socket.close(ignored);
  co_return false;
}

}  // namespace strata::gateway
