#include "net/https_get.h"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <optional>

namespace strata::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

Status ErrorFor(const beast::error_code& ec, std::string_view what, const std::string& key) {
  if (ec == beast::error::timeout) {
    return DeadlineExceededError(std::string(what) + " " + key + ": timed out");
  }
  return UnavailableError(std::string(what) + " " + key + ": " + ec.message());
}

asio::awaitable<Result<HttpResponse>> Exchange(asio::io_context& context, asio::ssl::context& tls,
                                               std::string host, int port,
                                               const HttpRequest& request, Duration timeout,
                                               size_t max_response_bytes) {
  const std::string key = host + ":" + std::to_string(port);
  tcp::resolver resolver(context);
  auto [resolve_error, endpoints] = co_await resolver.async_resolve(
      host, std::to_string(port), tcp::resolver::numeric_service, kTuple);
  if (resolve_error) co_return Err(ErrorFor(resolve_error, "cannot resolve", key));
  beast::ssl_stream<beast::tcp_stream> stream(context, tls);
  beast::get_lowest_layer(stream).expires_after(timeout);
  auto [connect_error, endpoint] =
      co_await beast::get_lowest_layer(stream).async_connect(endpoints, kTuple);
  if (connect_error) co_return Err(ErrorFor(connect_error, "cannot connect to", key));
  beast::get_lowest_layer(stream).expires_after(timeout);
  auto [handshake_error] = co_await stream.async_handshake(asio::ssl::stream_base::client, kTuple);
  if (handshake_error) co_return Err(ErrorFor(handshake_error, "TLS handshake with", key));

  http::request<http::string_body> message;
  message.method_string(request.method);
  message.target(request.target);
  message.version(11);
  for (const auto& [name, value] : request.headers) message.set(name, value);
  if (request.Header("Host").empty()) message.set(http::field::host, key);
  message.body() = request.body;
  message.keep_alive(false);
  message.prepare_payload();
  beast::get_lowest_layer(stream).expires_after(timeout);
  auto [write_error, written] = co_await http::async_write(stream, message, kTuple);
  if (write_error) co_return Err(ErrorFor(write_error, "request to", key));
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(max_response_bytes);
  beast::get_lowest_layer(stream).expires_after(timeout);
  auto [read_error, read] = co_await http::async_read(stream, buffer, parser, kTuple);
  if (read_error == http::error::body_limit) {
    co_return Err(ResourceExhaustedError("response from " + key + " is larger than " +
                                         std::to_string(max_response_bytes) + " bytes"));
  }
  if (read_error) co_return Err(ErrorFor(read_error, "reading the response from", key));
  HttpResponse response;
  response.status = static_cast<int>(parser.get().result_int());
  for (const auto& field : parser.get()) {
    response.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  response.body = std::move(parser.get().body());
  co_return response;
}

}  // namespace

Result<HttpResponse> HttpsGetUnverified(std::string_view host, int port, const HttpRequest& request,
                                        Duration timeout, size_t max_response_bytes) {
  asio::io_context context;
  asio::ssl::context tls(asio::ssl::context::tls_client);
  tls.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                  asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                  asio::ssl::context::no_tlsv1_1);
  tls.set_verify_mode(asio::ssl::verify_none);
  std::optional<Result<HttpResponse>> outcome;
  asio::co_spawn(
      context,
      Exchange(context, tls, std::string(host), port, request, timeout, max_response_bytes),
      [&outcome](std::exception_ptr error, Result<HttpResponse> result) {
        if (error) {
          outcome = Err(InternalError("HTTPS request failed unexpectedly"));
        } else {
          outcome = std::move(result);
        }
      });
  context.run();
  return std::move(*outcome);
}

}  // namespace strata::net
