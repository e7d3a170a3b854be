#include "server/api_listener.h"

#include <sys/socket.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <set>
#include <thread>

#include "server/api_status.h"

namespace strata::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using asio::awaitable;
using namespace asio::experimental::awaitable_operators;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr auto kStreamPollInterval = std::chrono::seconds(1);

// Wakes a connection that waits for its stream. Shared with the stream's wake callback, which
// may outlive the connection and run on another thread: it only posts to the loop.
struct StreamWaker {
  explicit StreamWaker(asio::any_io_executor executor) : timer(executor) {}
  asio::steady_timer timer;
  std::atomic<bool> pending{false};
};

template <typename Body>
void SetHeaders(const net::HttpHeaders& headers, http::response<Body>& response) {
  for (const auto& [name, value] : headers) response.set(name, value);
}

net::HttpResponse StatusResponse(const Status& status, int http_code) {
  nlohmann::json body = StatusObject(status);
  body["code"] = http_code;
  return net::HttpResponse::Text(http_code, "application/json", body.dump());
}

// True when the peer closed its side (or the socket broke); false while it is only quiet.
bool PeerHungUp(tcp::socket& socket) {
  char byte;
  ssize_t peeked = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

}  // namespace

struct ApiListener::Impl {
  Impl(ApiListenerOptions options_in, ApiHandler handler_in)
      : options(std::move(options_in)), handler(std::move(handler_in)) {}

  awaitable<void> Accept();
  awaitable<void> Serve(tcp::socket socket);
  awaitable<bool> WriteStream(beast::tcp_stream& stream, ApiReply& reply, unsigned version);

  ApiListenerOptions options;
  ApiHandler handler;
  asio::io_context context{1};
  std::optional<tcp::acceptor> acceptor;
  std::set<beast::tcp_stream*> connections;  // touched on the loop thread only
  std::thread thread;
  bool started = false;
  bool stopped = false;
};

awaitable<void> ApiListener::Impl::Accept() {
  while (true) {
    auto [ec, socket] = co_await acceptor->async_accept(kTuple);
    if (ec) {
      if (!acceptor->is_open()) co_return;
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    asio::co_spawn(context, Serve(std::move(socket)), asio::detached);
  }
}

awaitable<bool> ApiListener::Impl::WriteStream(beast::tcp_stream& stream, ApiReply& reply,
                                               unsigned version) {
  http::response<http::empty_body> head{static_cast<http::status>(reply.response.status), version};
  SetHeaders(reply.response.headers, head);
  head.chunked(true);
  head.keep_alive(false);
  http::response_serializer<http::empty_body> serializer{head};
  auto [head_error, head_bytes] = co_await http::async_write_header(stream, serializer, kTuple);
  if (head_error) co_return false;

  auto waker = std::make_shared<StreamWaker>(stream.get_executor());
  std::weak_ptr<StreamWaker> weak = waker;
  reply.stream->SetWake([weak] {
    std::shared_ptr<StreamWaker> w = weak.lock();
    if (w == nullptr || w->pending.exchange(true)) return;
    asio::post(w->timer.get_executor(), [weak] {
      if (std::shared_ptr<StreamWaker> alive = weak.lock()) alive->timer.cancel();
    });
  });
  bool finished = false;
  while (!finished) {
    waker->pending = false;
    std::string data = reply.stream->Read(&finished);
    if (!data.empty()) {
      auto [ec, n] =
          co_await asio::async_write(stream, http::make_chunk(asio::buffer(data)), kTuple);
      if (ec) break;
    }
    if (finished || PeerHungUp(stream.socket())) break;
    if (waker->pending) continue;
    waker->timer.expires_after(kStreamPollInterval);
    co_await waker->timer.async_wait(kTuple);
    if (!stream.socket().is_open()) break;
  }
  reply.stream->SetWake(nullptr);
  if (finished) co_await asio::async_write(stream, http::make_chunk_last(), kTuple);
  co_return false;  // a streamed response closes its connection
}

awaitable<void> ApiListener::Impl::Serve(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  connections.insert(&stream);
  beast::flat_buffer buffer;
  while (!stopped) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<uint32_t>(options.max_header_bytes));
    parser.body_limit(options.max_body_bytes);
    stream.expires_after(options.idle_timeout);
    auto [ec, bytes] = co_await http::async_read(stream, buffer, parser, kTuple);
    stream.expires_never();
    if (ec == http::error::body_limit || ec == http::error::header_limit) {
      bool body = ec == http::error::body_limit;
      std::string what = body ? "request body" : "request header";
      size_t limit = body ? options.max_body_bytes : options.max_header_bytes;
      net::HttpResponse rejection = StatusResponse(
          InvalidArgumentError(what + " is larger than the limit of " + std::to_string(limit) +
                               " bytes; nothing was changed"),
          body ? 413 : 431);
      http::response<http::string_body> response{static_cast<http::status>(rejection.status), 11};
      SetHeaders(rejection.headers, response);
      response.body() = std::move(rejection.body);
      response.keep_alive(false);
      response.prepare_payload();
      co_await http::async_write(stream, response, kTuple);
      break;
    }
    if (ec) break;
    http::request<http::string_body> message = parser.release();
    net::HttpRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    for (const auto& field : message) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = std::move(message.body());
    ApiReply reply = handler(request);
    if (reply.stream != nullptr) {
      co_await WriteStream(stream, reply, message.version());
      break;
    }
    http::response<http::string_body> response{static_cast<http::status>(reply.response.status),
                                               message.version()};
    SetHeaders(reply.response.headers, response);
    response.body() = std::move(reply.response.body);
    response.keep_alive(message.keep_alive() && !stopped);
    response.prepare_payload();
    auto [write_error, written] = co_await http::async_write(stream, response, kTuple);
    if (write_error || !response.keep_alive()) break;
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  connections.erase(&stream);
}

ApiListener::ApiListener(ApiListenerOptions options, ApiHandler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {}

ApiListener::~ApiListener() { Stop(); }

Status ApiListener::Start() {
  beast::error_code ec;
  asio::ip::address address = asio::ip::make_address(impl_->options.host, ec);
  if (ec) return InvalidArgumentError("host \"" + impl_->options.host + "\" is not an IP address");
  tcp::endpoint endpoint(address, static_cast<unsigned short>(impl_->options.port));
  tcp::acceptor& acceptor = impl_->acceptor.emplace(impl_->context);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    impl_->acceptor.reset();
    return UnavailableError("cannot listen on " + impl_->options.host + ":" +
                            std::to_string(impl_->options.port) + ": " + ec.message());
  }
  port_ = acceptor.local_endpoint().port();
  impl_->started = true;
  asio::co_spawn(impl_->context, impl_->Accept(), asio::detached);
  impl_->thread = std::thread([this] { impl_->context.run(); });
  return Status::Ok();
}

void ApiListener::Stop() {
  if (!impl_->started || impl_->stopped) return;
  asio::post(impl_->context, [impl = impl_.get()] {
    impl->stopped = true;
    beast::error_code ignored;
    impl->acceptor->close(ignored);
    for (beast::tcp_stream* stream : impl->connections) stream->socket().close(ignored);
  });
  impl_->thread.join();
  impl_->stopped = true;
}

}  // namespace strata::server
