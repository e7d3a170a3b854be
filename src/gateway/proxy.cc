// One client connection of the gateway: strict HTTP/1.1 reading with limits and timeouts, then
// each request served in turn: inference calls (inference_call.h), the model list, health and
// metrics.

#include <fmt/format.h>

#include "gateway/http_exchange.h"
#include "gateway/inference_call.h"

namespace strata::gateway {
namespace {

// Answers a request that is not an inference call. Returns whether to keep the connection.
asio::awaitable<bool> ServeLocal(GatewayServer::Impl& server, beast::tcp_stream& client,
                                 const http::request<http::string_body>& request) {
  const bool keep = request.keep_alive();
  const std::string_view target = request.target();
  if (request.method() == http::verb::get && target == "/v1/models") {
    co_return co_await Respond(client, 200, server.table.load()->router.ModelsListBody(), keep);
  }
  if (request.method() == http::verb::get && target == "/healthz") {
    co_return co_await Respond(client, 200, "ok\n", keep, "text/plain");
  }
  co_return co_await RespondError(
      client, 404,
      fmt::format("no route for {} {}", std::string_view(request.method_string()), target),
      "not_found", keep);
}

}  // namespace

asio::awaitable<void> ServeConnection(GatewayServer::Impl& server, Worker& worker,
                                      tcp::socket socket) {
  beast::tcp_stream client(std::move(socket));
  beast::flat_buffer buffer;
  const LimitsConfig& limits = server.config.limits;
  while (!server.stopped.load()) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(
        static_cast<uint32_t>(std::min<size_t>(limits.max_header_bytes, UINT32_MAX)));
    parser.body_limit(limits.max_body_bytes);
    client.expires_after(limits.idle_timeout);
    auto [ec, n] = co_await http::async_read_header(client, buffer, parser, kAsTuple);
    if (!ec) ec = ParseBuffered(parser, buffer);
    if (!ec && !parser.is_done()) {
      client.expires_after(limits.read_timeout);
      std::tie(ec, n) = co_await http::async_read(client, buffer, parser, kAsTuple);
    }
    if (ec) {
      if (ec == http::error::header_limit) {
        co_await RespondError(client, 431, "request header too large", "header_too_large", false);
      } else if (ec == http::error::body_limit) {
        co_await RespondError(client, 413, "request body too large", "body_too_large", false);
      } else if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
                 ec != http::error::end_of_stream && ec != http::error::partial_message) {
        co_await RespondError(client, 400, fmt::format("malformed HTTP request: {}", ec.message()),
                              "bad_request", false);
      }
      break;
    }
    http::request<http::string_body> request = parser.release();
    bool keep = false;
    const std::string_view target = request.target();
    if (request.method() == http::verb::post && target == "/v1/chat/completions") {
      keep =
          co_await InferenceCall(server, worker, client, request, ApiKind::kChatCompletions).Run();
    } else if (request.method() == http::verb::post && target == "/v1/completions") {
      keep = co_await InferenceCall(server, worker, client, request, ApiKind::kCompletions).Run();
    } else if (request.method() == http::verb::get && target == "/metrics") {
      keep = co_await Respond(client, 200, RenderMetrics(server), request.keep_alive(),
                              "text/plain; version=0.0.4; charset=utf-8");
    } else {
      keep = co_await ServeLocal(server, client, request);
    }
    if (!keep) break;
  }
  beast::error_code ignored;
  client.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

}  // namespace strata::gateway
