#include "net/http_client.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>

namespace strata::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using asio::awaitable;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

Status ErrorFor(const beast::error_code& ec, std::string_view what, const std::string& key) {
  if (ec == beast::error::timeout) {
    return DeadlineExceededError(std::string(what) + " " + key + ": timed out");
  }
  return UnavailableError(std::string(what) + " " + key + ": " + ec.message());
}

}  // namespace

struct HttpClient::Impl {
  using Stream = std::unique_ptr<beast::tcp_stream>;

  explicit Impl(HttpClientOptions opts) : options(std::move(opts)) {}

  awaitable<Result<Stream>> Connect(const std::string& host, int port, const std::string& key);
  awaitable<Result<HttpResponse>> Exchange(std::string host, int port, const HttpRequest& request,
                                           const std::function<bool(std::string_view)>* on_data);

  HttpClientOptions options;
  asio::io_context context;
  std::map<std::string, std::vector<Stream>> idle;
};

awaitable<Result<HttpClient::Impl::Stream>> HttpClient::Impl::Connect(const std::string& host,
                                                                      int port,
                                                                      const std::string& key) {
  tcp::resolver resolver(context);
  auto [resolve_error, endpoints] = co_await resolver.async_resolve(
      host, std::to_string(port), tcp::resolver::numeric_service, kTuple);
  if (resolve_error) co_return Err(ErrorFor(resolve_error, "cannot resolve", key));
  auto stream = std::make_unique<beast::tcp_stream>(context);
  stream->expires_after(options.connect_timeout);
  auto [connect_error, endpoint] = co_await stream->async_connect(endpoints, kTuple);
  if (connect_error) co_return Err(ErrorFor(connect_error, "cannot connect to", key));
  beast::error_code ignored;
  stream->socket().set_option(tcp::no_delay(true), ignored);
  co_return stream;
}

awaitable<Result<HttpResponse>> HttpClient::Impl::Exchange(
    std::string host, int port, const HttpRequest& request,
    const std::function<bool(std::string_view)>* on_data) {
  std::string key = host + ":" + std::to_string(port);
  http::request<http::string_body> message;
  message.method_string(request.method);
  message.target(request.target);
  message.version(11);
  for (const auto& [name, value] : request.headers) message.set(name, value);
  if (request.Header("Host").empty()) message.set(http::field::host, key);
  message.body() = request.body;
  message.keep_alive(true);
  message.prepare_payload();

  for (int attempt = 0; attempt < 2; ++attempt) {
    Stream stream;
    std::vector<Stream>& pooled = idle[key];
    bool reused = !pooled.empty();
    if (reused) {
      stream = std::move(pooled.back());
      pooled.pop_back();
    } else {
      Result<Stream> connected = co_await Connect(host, port, key);
      if (!connected) co_return Err(connected.error());
      stream = std::move(*connected);
    }
    stream->expires_after(options.idle_timeout);
    auto [write_error, written] = co_await http::async_write(*stream, message, kTuple);
    beast::flat_buffer buffer;
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(options.max_response_bytes);
    beast::error_code read_error = write_error;
    if (!read_error) {
      stream->expires_after(options.idle_timeout);
      std::tie(read_error, std::ignore) =
          co_await http::async_read_header(*stream, buffer, parser, kTuple);
    }
    if (read_error) {
      // A kept-alive connection the server closed meanwhile: try once more on a new one.
      if (reused && (read_error == http::error::end_of_stream ||
                     read_error == asio::error::connection_reset ||
                     read_error == asio::error::broken_pipe || read_error == asio::error::eof)) {
        continue;
      }
      co_return Err(ErrorFor(read_error, "request to", key));
    }
    HttpResponse response;
    response.status = static_cast<int>(parser.get().result_int());
    for (const auto& field : parser.get()) {
      response.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    char piece[16 * 1024];
    while (!parser.is_done()) {
      parser.get().body().data = piece;
      parser.get().body().size = sizeof(piece);
      stream->expires_after(options.idle_timeout);
      auto [ec, n] = co_await http::async_read_some(*stream, buffer, parser, kTuple);
      if (ec == http::error::need_buffer) ec = {};
      if (ec == http::error::body_limit) {
        co_return Err(ResourceExhaustedError("response from " + key + " is larger than " +
                                             std::to_string(options.max_response_bytes) +
                                             " bytes"));
      }
      if (ec) co_return Err(ErrorFor(ec, "reading the response from", key));
      std::string_view data(piece, sizeof(piece) - parser.get().body().size);
      if (data.empty()) continue;
      if (on_data == nullptr) {
        response.body.append(data);
      } else if (!(*on_data)(data)) {
        co_return response;  // the caller went away: the stream is dropped and closes
      }
    }
    if (parser.get().keep_alive() && pooled.size() < options.max_idle_connections_per_host) {
      stream->expires_never();
      pooled.push_back(std::move(stream));
    }
    co_return response;
  }
  co_return Err(UnavailableError("request to " + key + ": the connection closed twice"));
}

HttpClient::HttpClient(HttpClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpClient::~HttpClient() = default;

Result<HttpResponse> HttpClient::Send(std::string_view host, int port, const HttpRequest& request) {
  return SendStreaming(host, port, request, nullptr);
}

Result<HttpResponse> HttpClient::SendStreaming(
    std::string_view host, int port, const HttpRequest& request,
    const std::function<bool(std::string_view)>& on_data) {
  std::optional<Result<HttpResponse>> outcome;
  asio::co_spawn(impl_->context,
                 impl_->Exchange(std::string(host), port, request, on_data ? &on_data : nullptr),
                 [&outcome](std::exception_ptr error, Result<HttpResponse> result) {
                   if (error) {
                     outcome = Err(InternalError("HTTP client failed unexpectedly"));
                   } else {
                     outcome = std::move(result);
                   }
                 });
  impl_->context.restart();
  impl_->context.run();
  return std::move(*outcome);
}

size_t HttpClient::IdleConnections() const {
  size_t count = 0;
  for (const auto& [key, streams] : impl_->idle) count += streams.size();
  return count;
}

}  // namespace strata::net
