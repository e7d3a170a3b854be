#include "net/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "common/check.h"

namespace strata::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;
using asio::awaitable;
using asio::use_awaitable;
using namespace asio::experimental::awaitable_operators;

namespace {

constexpr auto kTuple = asio::as_tuple(use_awaitable);
// How long a refused client may go on sending before the connection closes (DrainRefused).
constexpr auto kRefusedDrainTime = std::chrono::seconds(5);

// Says that nothing more will be sent, then reads and drops what a refused client still sends
// until it closes, for kRefusedDrainTime at most. Closing a socket with unread bytes resets the
// connection, and the reset can destroy the answer before the client reads it: a client still
// writing a body over the limit would see a broken pipe instead of its 413 (nginx's lingering
// close).
template <typename Stream>
awaitable<void> DrainRefused(Stream& stream) {
  beast::error_code ignored;
  beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_send, ignored);
  beast::get_lowest_layer(stream).expires_after(kRefusedDrainTime);
  std::array<char, 16 * 1024> dropped;
  while (true) {
    auto [error, n] = co_await stream.async_read_some(asio::buffer(dropped), kTuple);
    if (error) break;
  }
}

// Lets writers reach an event loop that may have been stopped: they post only while it lives.
struct LoopHandle {
  std::mutex mutex;
  asio::io_context* context = nullptr;  // null once the server stopped

  // Always queued, never run inline: a task may itself post (a writer called from a task),
  // and the lock is not re-entrant.
  template <typename Task>
  void Post(Task&& task) {
    std::lock_guard<std::mutex> lock(mutex);
    if (context != nullptr) asio::post(*context, std::forward<Task>(task));
  }
};

}  // namespace

// One response being produced. Fields below `loop` are touched only on the connection's event
// loop thread.
struct ResponseWriter::State {
  std::shared_ptr<LoopHandle> loop;
  std::atomic<bool> client_gone{false};
  // Wakes the connection waiting for output; null when it is not waiting.
  asio::steady_timer* waiter = nullptr;
  bool complete = false;  // nothing more will be written
  std::optional<HttpResponse> full;
  bool stream_started = false;
  int stream_status = 200;
  HttpHeaders stream_headers;
  std::deque<std::string> chunks;
  bool stream_ended = false;
  std::function<void()> on_close;

  void Wake() {
    if (waiter != nullptr) waiter->cancel();
  }
  bool Closed() const { return complete || client_gone.load(); }
};

void ResponseWriter::Respond(HttpResponse response) {
  state_->loop->Post([state = state_, response = std::move(response)]() mutable {
    if (state->Closed() || state->full || state->stream_started) return;
    state->full = std::move(response);
    state->Wake();
  });
}

void ResponseWriter::StartStream(int status, HttpHeaders headers) {
  state_->loop->Post([state = state_, status, headers = std::move(headers)]() mutable {
    if (state->Closed() || state->full || state->stream_started) return;
    state->stream_started = true;
    state->stream_status = status;
    state->stream_headers = std::move(headers);
    state->Wake();
  });
}

void ResponseWriter::WriteChunk(std::string data) {
  if (data.empty()) return;
  state_->loop->Post([state = state_, data = std::move(data)]() mutable {
    STRATA_CHECK(state->stream_started);
    if (state->Closed() || state->stream_ended) return;
    state->chunks.push_back(std::move(data));
    state->Wake();
  });
}

void ResponseWriter::EndStream() {
  state_->loop->Post([state = state_] {
    if (state->Closed() || !state->stream_started) return;
    state->stream_ended = true;
    state->Wake();
  });
}

void ResponseWriter::OnClientGone(std::function<void()> on_close) {
  state_->loop->Post(
      [state = state_, on_close = std::move(on_close)]() mutable { state->on_close = on_close; });
}

bool ResponseWriter::ClientGone() const { return state_->client_gone.load(); }

struct HttpServer::Impl {
  // One connection's place in its request cycle, for its loop's deadline sweep.
  struct Connection {
    enum class Phase { kIdle, kReading, kBusy };
    tcp::socket* socket;
    Phase phase = Phase::kBusy;
    std::chrono::steady_clock::time_point since;  // when the phase began
    bool late = false;  // the sweep cancelled a read that ran past read_timeout

    void Enter(Phase next) {
      phase = next;
      if (next != Phase::kBusy) since = std::chrono::steady_clock::now();
    }
  };

  struct Loop {
    asio::io_context context{1};
    std::optional<tcp::acceptor> acceptor;
    std::shared_ptr<LoopHandle> handle = std::make_shared<LoopHandle>();
    // Every open connection. Those waiting for a request are closed at once when the server
    // stops. One timer per loop enforces idle_timeout and read_timeout on all of them, so that
    // a request arms and cancels no timer of its own (each was two timerfd_settime calls).
    std::set<Connection*> connections;
    asio::steady_timer sweeper{context};
    bool sweeping = false;  // the sweeper is armed
    std::thread thread;
  };

  explicit Impl(HttpServerOptions opts) : options(std::move(opts)) {}

  awaitable<void> Accept(Loop& loop);
  // A connection: over TLS when the server has a certificate, after the handshake.
  awaitable<void> Serve(Loop& loop, tcp::socket socket);
  // The requests of one connection (a beast::tcp_stream or a TlsStream), in turn.
  template <typename Stream>
  awaitable<void> ServeRequests(Loop& loop, Stream& stream);
  template <typename Stream>
  awaitable<bool> WriteResponse(Stream& stream, ResponseWriter::State& state, bool keep_alive,
                                unsigned version);
  void Dispatch(const HttpRequest& request, ResponseWriter writer);
  void SessionEnded();
  // Arms the loop's sweeper while it has connections; each sweep closes the connections idle
  // past idle_timeout and cancels the reads past read_timeout (marking them late).
  void ArmSweeper(Loop& loop);
  void SweepDeadlines(Loop& loop);

  HttpResponse Error(int status, const std::string& message) const;

  HttpServerOptions options;
  std::optional<asio::ssl::context> tls;  // set by Start when options carry a certificate
  std::map<std::pair<std::string, std::string>, HttpHandler> routes;
  HttpHandler fallback;
  std::vector<std::unique_ptr<Loop>> loops;
  std::atomic<bool> stopping{false};
  bool started = false;
  bool stopped = false;
  std::mutex sessions_mutex;
  std::condition_variable sessions_done;
  int sessions = 0;
};

namespace {

HttpResponse ErrorResponse(int status, std::string_view message) {
  // OpenAI-shaped, which is also readable for any other client.
  std::string escaped;
  for (char c : message) {
    if (c == '"' || c == '\\') escaped.push_back('\\');
    escaped.push_back(c);
  }
  return HttpResponse::Text(
      status, "application/json",
      "{\"error\":{\"message\":\"" + escaped + "\",\"type\":\"invalid_request_error\"}}");
}

template <typename Body>
void CopyHeaders(const HttpHeaders& headers, http::response<Body>& response) {
  for (const auto& [name, value] : headers) response.set(name, value);
}

}  // namespace

HttpResponse HttpServer::Impl::Error(int status, const std::string& message) const {
  return options.error_response ? options.error_response(status, message)
                                : ErrorResponse(status, message);
}

void HttpServer::Impl::Dispatch(const HttpRequest& request, ResponseWriter writer) {
  std::string path(request.Path());
  auto it = routes.find({request.method, path});
  if (it != routes.end()) {
    it->second(request, writer);
    return;
  }
  if (fallback) {
    fallback(request, writer);
    return;
  }
  for (const auto& [key, handler] : routes) {
    if (key.second == path) {
      writer.Respond(Error(405, "method " + request.method + " not allowed"));
      return;
    }
  }
  writer.Respond(Error(404, "no route for " + path));
}

template <typename Stream>
awaitable<bool> HttpServer::Impl::WriteResponse(Stream& stream, ResponseWriter::State& state,
                                                bool keep_alive, unsigned version) {
  tcp::socket& socket = beast::get_lowest_layer(stream).socket();
  asio::steady_timer waiter(stream.get_executor());
  bool header_sent = false;
  bool watching_socket = true;
  bool yielded = false;
  auto client_gone = [&state] {
    state.client_gone = true;
    if (state.on_close) state.on_close();
    return false;
  };
  keep_alive = keep_alive && !stopping.load();
  while (true) {
    if (state.full) {
      http::response<http::string_body> response{static_cast<http::status>(state.full->status),
                                                 version};
      CopyHeaders(state.full->headers, response);
      response.body() = std::move(state.full->body);
      response.keep_alive(keep_alive);
      response.prepare_payload();
      auto [ec, n] = co_await http::async_write(stream, response, kTuple);
      state.complete = true;
      co_return !ec;
    }
    if (state.stream_started && !header_sent) {
      http::response<http::empty_body> response{static_cast<http::status>(state.stream_status),
                                                version};
      CopyHeaders(state.stream_headers, response);
      response.chunked(true);
      response.keep_alive(keep_alive);
      http::response_serializer<http::empty_body> serializer{response};
      auto [ec, n] = co_await http::async_write_header(stream, serializer, kTuple);
      if (ec) co_return client_gone();
      header_sent = true;
      continue;
    }
    if (header_sent && !state.chunks.empty()) {
      std::string data = std::move(state.chunks.front());
      state.chunks.pop_front();
      auto [ec, n] =
          co_await asio::async_write(stream, http::make_chunk(asio::buffer(data)), kTuple);
      if (ec) co_return client_gone();
      continue;
    }
    if (header_sent && state.stream_ended) {
      auto [ec, n] = co_await asio::async_write(stream, http::make_chunk_last(), kTuple);
      state.complete = true;
      co_return !ec;
    }
    // Nothing to write yet. A handler that answered at once posted its answer before this
    // point: one turn of the loop delivers it, without the wait below (a parallel group).
    if (!yielded) {
      yielded = true;
      co_await asio::post(stream.get_executor(), asio::use_awaitable);
      continue;
    }
    // Wait for the handler, and notice a client that hangs up meanwhile.
    waiter.expires_at(asio::steady_timer::time_point::max());
    state.waiter = &waiter;
    if (watching_socket) {
      auto woke =
          co_await (waiter.async_wait(kTuple) || socket.async_wait(tcp::socket::wait_read, kTuple));
      state.waiter = nullptr;
      if (woke.index() == 1) {
        char byte;
        ssize_t peeked = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
          co_return client_gone();
        }
        // A pipelined request: it waits in the socket until this response is done.
        watching_socket = false;
      }
    } else {
      co_await waiter.async_wait(kTuple);
      state.waiter = nullptr;
    }
    if (!socket.is_open()) co_return client_gone();
  }
}

void HttpServer::Impl::ArmSweeper(Loop& loop) {
  if (loop.sweeping || loop.connections.empty()) return;
  // A tenth of the shorter limit, within [10 ms, 1 s]: a limit is enforced that much late at
  // most, and a loop with connections wakes once a second for it.
  const auto period =
      std::clamp<Duration>(std::min(options.idle_timeout, options.read_timeout) / 10,
                           std::chrono::milliseconds(10), std::chrono::seconds(1));
  loop.sweeping = true;
  loop.sweeper.expires_after(std::chrono::duration_cast<asio::steady_timer::duration>(period));
  loop.sweeper.async_wait([this, &loop](beast::error_code ec) {
    loop.sweeping = false;
    if (ec) return;
    SweepDeadlines(loop);
    ArmSweeper(loop);
  });
}

void HttpServer::Impl::SweepDeadlines(Loop& loop) {
  const auto now = std::chrono::steady_clock::now();
  beast::error_code ignored;
  for (Connection* connection : loop.connections) {
    if (connection->phase == Connection::Phase::kIdle &&
        now - connection->since >= options.idle_timeout) {
      connection->socket->close(ignored);  // idle too long: nothing to answer
    } else if (connection->phase == Connection::Phase::kReading && !connection->late &&
               now - connection->since >= options.read_timeout) {
      // The socket stays open for the 408.
      connection->late = true;
      connection->socket->cancel(ignored);
    }
  }
}

awaitable<void> HttpServer::Impl::Serve(Loop& loop, tcp::socket socket) {
  if (!tls) {
    beast::tcp_stream stream(std::move(socket));
    co_await ServeRequests(loop, stream);
  } else {
    TlsStream stream(std::move(socket), *tls);
    // The handshake is part of the first request's read_timeout: a client that connects and
    // says nothing is closed as one that trickles its head.
    beast::get_lowest_layer(stream).expires_after(options.read_timeout);
    auto [error] = co_await stream.async_handshake(asio::ssl::stream_base::server, kTuple);
    beast::get_lowest_layer(stream).expires_never();
    if (!error) co_await ServeRequests(loop, stream);
  }
  SessionEnded();
}

template <typename Stream>
awaitable<void> HttpServer::Impl::ServeRequests(Loop& loop, Stream& stream) {
  beast::flat_buffer buffer;
  // Everything here runs on the loop's one thread, and the sweep touches the socket only
  // while the connection is registered, so the session is still alive.
  Connection connection{&beast::get_lowest_layer(stream).socket()};
  loop.connections.insert(&connection);
  ArmSweeper(loop);
  while (!stopping.load()) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<uint32_t>(options.max_header_bytes));
    parser.body_limit(options.max_body_bytes);
    if (buffer.size() == 0) {
      // Idle until the next request's first byte (a pipelined one is already in the buffer).
      connection.Enter(Connection::Phase::kIdle);
      auto [idle_error, n] = co_await stream.async_read_some(buffer.prepare(4096), kTuple);
      connection.Enter(Connection::Phase::kBusy);
      if (idle_error) break;  // closed, or idle too long: nothing to answer
      buffer.commit(n);
    }
    // From its first byte the request has read_timeout to arrive whole: a client that trickles
    // its head (or body) holds the connection no longer, and is told so with a 408. The sweep
    // cancels the reads and says so (`late`).
    connection.late = false;
    connection.Enter(Connection::Phase::kReading);
    std::optional<HttpResponse> rejection;
    auto [header_error, head_bytes] =
        co_await http::async_read_header(stream, buffer, parser, kTuple);
    if (!connection.late && !header_error) {
      // RFC 9112 section 3.2: an HTTP/1.1 request has exactly one Host field.
      const auto hosts = parser.get().count(http::field::host);
      if (parser.get().version() == 11 && hosts != 1) {
        rejection = Error(400, hosts == 0 ? "malformed HTTP request: HTTP/1.1 without a Host field"
                                          : "malformed HTTP request: more than one Host field");
      } else {
        auto [body_error, body_bytes] = co_await http::async_read(stream, buffer, parser, kTuple);
        header_error = body_error;
      }
    }
    connection.Enter(Connection::Phase::kBusy);
    const bool late = connection.late;
    if (late) {
      const auto limit_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(options.read_timeout).count();
      rejection =
          Error(408, "request not received whole within " + std::to_string(limit_ms) + " ms");
    } else if (rejection) {
      // The Host check refused it.
    } else if (header_error == http::error::body_limit) {
      rejection = Error(413, "request body is larger than the limit of " +
                                 std::to_string(options.max_body_bytes) + " bytes");
    } else if (header_error == http::error::header_limit) {
      rejection = Error(431, "request header is larger than the limit of " +
                                 std::to_string(options.max_header_bytes) + " bytes");
    } else if (header_error &&
               header_error.category() ==
                   http::make_error_code(http::error::bad_target).category() &&
               header_error != http::error::end_of_stream &&
               header_error != http::error::partial_message) {
      rejection = Error(400, "malformed HTTP request: " + header_error.message());
    }
    auto state = std::make_shared<ResponseWriter::State>();
    state->loop = loop.handle;
    if (rejection) {
      state->full = std::move(rejection);
      if (co_await WriteResponse(stream, *state, /*keep_alive=*/false, 11)) {
        co_await DrainRefused(stream);
      }
      break;
    }
    if (header_error) break;  // the client closed: nothing to answer
    http::request<http::string_body> message = parser.release();
    HttpRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    for (const auto& field : message) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = std::move(message.body());
    bool keep_alive = message.keep_alive();
    Dispatch(request, ResponseWriter(state));
    bool written = co_await WriteResponse(stream, *state, keep_alive, message.version());
    if (!written || !keep_alive) break;
  }
  loop.connections.erase(&connection);
  beast::error_code ignored;
  beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_send, ignored);
}

void HttpServer::Impl::SessionEnded() {
  std::lock_guard<std::mutex> lock(sessions_mutex);
  --sessions;
  sessions_done.notify_all();
}

awaitable<void> HttpServer::Impl::Accept(Loop& loop) {
  while (true) {
    auto [ec, socket] = co_await loop.acceptor->async_accept(kTuple);
    if (ec) {
      if (stopping.load() || !loop.acceptor->is_open()) co_return;
      continue;  // e.g. a connection reset before it was accepted
    }
    socket.set_option(tcp::no_delay(true), ec);
    {
      std::lock_guard<std::mutex> lock(sessions_mutex);
      ++sessions;
    }
    asio::co_spawn(loop.context, Serve(loop, std::move(socket)), asio::detached);
  }
}

HttpServer::HttpServer(HttpServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpServer::~HttpServer() { Stop(Duration{0}); }

void HttpServer::Route(std::string method, std::string path, HttpHandler handler) {
  STRATA_CHECK(!impl_->started);
  impl_->routes[{std::move(method), std::move(path)}] = std::move(handler);
}

void HttpServer::Fallback(HttpHandler handler) {
  STRATA_CHECK(!impl_->started);
  impl_->fallback = std::move(handler);
}

Status HttpServer::Start() {
  STRATA_CHECK(!impl_->started);
  const HttpServerOptions& options = impl_->options;
  if (options.threads < 1) return InvalidArgumentError("threads must be at least 1");
  if (options.port < 0 || options.port > 65535) {
    return InvalidArgumentError("port " + std::to_string(options.port) + " is out of range");
  }
  beast::error_code ec;
  asio::ip::address address = asio::ip::make_address(options.host, ec);
  if (ec) return InvalidArgumentError("host \"" + options.host + "\" is not an IP address");
  if (options.tls_certificate_pem.empty() != options.tls_key_pem.empty()) {
    return InvalidArgumentError("TLS needs both a certificate and its key");
  }
  if (!options.tls_certificate_pem.empty()) {
    asio::ssl::context& tls = impl_->tls.emplace(asio::ssl::context::tls_server);
    tls.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                    asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                    asio::ssl::context::no_tlsv1_1 | asio::ssl::context::single_dh_use);
    tls.use_certificate_chain(asio::buffer(options.tls_certificate_pem), ec);
    if (!ec) tls.use_private_key(asio::buffer(options.tls_key_pem), asio::ssl::context::pem, ec);
    if (ec) {
      impl_->tls.reset();
      return InvalidArgumentError("the TLS certificate or key: " + ec.message());
    }
  }
  int port = options.port;
  for (int i = 0; i < options.threads; ++i) {
    auto loop = std::make_unique<Impl::Loop>();
    loop->handle->context = &loop->context;
    tcp::acceptor& acceptor = loop->acceptor.emplace(loop->context);
    tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    // Shared only among this server's own loops: with one loop, a second process asking for
    // the same port gets an error instead of half the connections.
    if (!ec && options.threads > 1) {
      acceptor.set_option(asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>(true), ec);
    }
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      impl_->loops.clear();
      return UnavailableError("cannot listen on " + options.host + ":" + std::to_string(port) +
                              ": " + ec.message());
    }
    port = acceptor.local_endpoint().port();  // the real one, for the other loops too
    impl_->loops.push_back(std::move(loop));
  }
  port_ = port;
  impl_->started = true;
  for (auto& loop : impl_->loops) {
    Impl::Loop& l = *loop;
    asio::co_spawn(l.context, impl_->Accept(l), asio::detached);
    l.thread = std::thread([&l] {
      auto guard = asio::make_work_guard(l.context);
      l.context.run();
    });
  }
  return Status::Ok();
}

void HttpServer::Post(std::function<void()> task) {
  STRATA_CHECK(impl_->started);
  impl_->loops.front()->handle->Post([task = std::move(task)] { task(); });
}

std::function<void(std::function<void()>)> HttpServer::Poster() const {
  STRATA_CHECK(impl_->started);
  // The handle outlives the loop (Stop nulls it) and, held here, the server.
  return [handle = impl_->loops.front()->handle](std::function<void()> task) {
    handle->Post([task = std::move(task)] { task(); });
  };
}

void HttpServer::PostAfter(Duration delay, std::function<void()> task) {
  STRATA_CHECK(impl_->started);
  Impl::Loop& loop = *impl_->loops.front();
  loop.handle->Post([&loop, delay, task = std::move(task)]() mutable {
    auto timer = std::make_shared<asio::steady_timer>(loop.context);
    timer->expires_after(std::chrono::duration_cast<asio::steady_timer::duration>(delay));
    timer->async_wait([timer, task = std::move(task)](beast::error_code ec) {
      if (!ec) task();
    });
  });
}

void HttpServer::Stop(Duration grace) {
  if (!impl_->started || impl_->stopped) return;
  impl_->stopped = true;
  impl_->stopping = true;
  for (auto& loop : impl_->loops) {
    Impl::Loop& l = *loop;
    l.handle->Post([&l] {
      beast::error_code ignored;
      l.acceptor->close(ignored);
      for (Impl::Connection* connection : l.connections) {
        if (connection->phase == Impl::Connection::Phase::kIdle) {
          connection->socket->close(ignored);
        }
      }
    });
  }
  {
    std::unique_lock<std::mutex> lock(impl_->sessions_mutex);
    impl_->sessions_done.wait_for(lock, grace, [this] { return impl_->sessions == 0; });
  }
  for (auto& loop : impl_->loops) {
    {
      std::lock_guard<std::mutex> lock(loop->handle->mutex);
      loop->handle->context = nullptr;
    }
    loop->context.stop();
    loop->thread.join();
  }
  // Destroying the contexts destroys the suspended connections with them.
  impl_->loops.clear();
}

}  // namespace strata::net
