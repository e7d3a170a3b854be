#include "gateway/http_exchange.h"

#include <fmt/format.h>

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

asio::awaitable<bool> Respond(beast::tcp_stream& client, int status, std::string body,
                              bool keep_alive, std::string_view content_type,
                              std::optional<int64_t> retry_after_seconds) {
  http::response<http::string_body> response{static_cast<http::status>(status), 11};
  response.set(http::field::content_type, content_type);
  if (retry_after_seconds)
    response.set(http::field::retry_after, std::to_string(*retry_after_seconds));
  response.keep_alive(keep_alive);
  response.body() = std::move(body);
  response.prepare_payload();
  auto [ec, n] = co_await http::async_write(client, response, kAsTuple);
  co_return !ec;
}

asio::awaitable<bool> RespondError(beast::tcp_stream& client, int status, std::string_view message,
                                   std::string_view code, bool keep_alive,
                                   std::optional<int64_t> retry_after_seconds) {
  co_return co_await Respond(client, status, ErrorBody(message, ErrorType(status), code),
                             keep_alive, "application/json", retry_after_seconds);
}

bool IsHopByHop(http::field field) {
  switch (field) {
    case http::field::connection:
    case http::field::keep_alive:
    case http::field::transfer_encoding:
    case http::field::te:
    case http::field::upgrade:
    case http::field::proxy_authorization:
    case http::field::authorization:
    case http::field::host:
    case http::field::content_length:
      return true;
    default:
      return false;
  }
}

std::string UpstreamHead(const http::request<http::string_body>& request, std::string_view host) {
  fmt::memory_buffer head;
  auto out = std::back_inserter(head);
  fmt::format_to(out, "{} {} HTTP/1.1\r\n", std::string_view(request.method_string()),
                 std::string_view(request.target()));
  for (const auto& field : request) {
    if (IsHopByHop(field.name())) continue;
    fmt::format_to(out, "{}: {}\r\n", std::string_view(field.name_string()),
                   std::string_view(field.value()));
  }
  fmt::format_to(out, "Host: {}\r\nContent-Length: {}\r\n\r\n", host, request.body().size());
  return fmt::to_string(head);
}

asio::awaitable<bool> Exchange(UpstreamConnection& connection, const tcp::endpoint* connect_to,
                               std::string_view head, std::string_view body,
                               http::response_parser<http::buffer_body>& parser, Duration timeout) {
  if (connect_to != nullptr) {
    connection.stream.expires_after(kConnectTimeout);
    auto [ec] = co_await connection.stream.async_connect(*connect_to, kAsTuple);
    if (ec) co_return false;
    connection.stream.socket().set_option(tcp::no_delay(true));
  }
  connection.stream.expires_after(timeout);
  const std::array<asio::const_buffer, 2> request = {asio::buffer(head), asio::buffer(body)};
  auto [write_ec, written] = co_await asio::async_write(connection.stream, request, kAsTuple);
  if (!write_ec) {
    auto [read_ec, read] =
        co_await http::async_read_header(connection.stream, connection.buffer, parser, kAsTuple);
    if (!read_ec) co_return true;
  }
  connection.stream.close();
  co_return false;
}

}  // namespace strata::gateway
