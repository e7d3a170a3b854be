#include "kube/https_transport.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <mutex>
#include <optional>
#include <vector>

namespace strata::kube {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using asio::awaitable;
using SteadyTime = std::chrono::steady_clock::time_point;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

bool IsIpAddress(const std::string& host) {
  beast::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// One TLS connection with its own io_context, so whichever thread holds it runs its I/O.
struct Connection {
  explicit Connection(ssl::context& tls) : stream(io, tls) {}
  asio::io_context io;  // declared first: destroyed after the stream that uses it
  beast::ssl_stream<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  SteadyTime idle_since;
};

// Runs `task` to completion on `io` on this thread. Asio reports I/O errors through the
// tuples; an exception here is a bug or memory exhaustion, reported as Internal.
Status RunToCompletion(asio::io_context& io, awaitable<Status> task) {
  std::optional<Status> outcome;
  asio::co_spawn(io, std::move(task), [&outcome](std::exception_ptr error, Status status) {
    outcome = error ? InternalError("HTTPS transport failed unexpectedly") : std::move(status);
  });
  io.restart();
  io.run();
  return outcome ? *outcome : InternalError("HTTPS transport: the exchange did not finish");
}

std::string TlsFailure(const beast::error_code& ec, SSL* ssl) {
  std::string reason = ec.message();
  long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) {
    reason += " (" + std::string(X509_verify_cert_error_string(verify)) + ")";
  }
  return reason;
}

http::request<http::string_body> ToBeast(const net::HttpRequest& request,
                                         const std::string& address) {
  http::request<http::string_body> message;
  message.method_string(request.method);
  message.target(request.target);
  message.version(11);
  // insert, not set: Impersonate-Group may repeat.
  for (const auto& [name, value] : request.headers) message.insert(name, value);
  if (request.Header("Host").empty()) message.set(http::field::host, address);
  message.body() = request.body;
  message.keep_alive(true);
  message.prepare_payload();
  return message;
}

using Parser = http::response_parser<http::buffer_body>;

void CopyHead(const Parser& parser, net::HttpResponse& head) {
  head.status = static_cast<int>(parser.get().result_int());
  for (const auto& field : parser.get()) {
    head.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
}

}  // namespace

struct HttpsTransport::Impl {
  TlsEndpoint endpoint;
  TransportOptions options;
  std::string address;
  ssl::context tls{ssl::context::tls_client};

  mutable std::mutex mutex;
  std::vector<std::unique_ptr<Connection>> idle;  // guarded by mutex
  std::atomic<uint64_t> connections_opened{0};

  Status Configure();
  std::unique_ptr<Connection> TakeIdle();
  void ReturnIdle(std::unique_ptr<Connection> connection);
  awaitable<Status> Connect(Connection& connection);
  Result<std::unique_ptr<Connection>> NewConnection();
  // Writes the request and reads the response's head into `parser`.
  awaitable<Status> WriteAndReadHead(Connection& connection,
                                     http::request<http::string_body>& message, Parser& parser);
  awaitable<Status> ReadBody(Connection& connection, Parser& parser, std::string& body);
  Status Failure(const beast::error_code& ec, std::string_view what) const {
    if (ec == beast::error::timeout) {
      return DeadlineExceededError(std::string(what) + " API server " + address + ": timed out");
    }
    return UnavailableError(std::string(what) + " API server " + address + ": " + ec.message());
  }
  // A connection with a response's head read into its parser.
  struct Exchanged {
    std::unique_ptr<Connection> connection;
    std::unique_ptr<Parser> parser;
  };
  // Sends on a pooled or new connection; retries once when a reused one turns out closed.
  // `body_limit` nullopt: unlimited (a watch).
  Result<Exchanged> Exchange(http::request<http::string_body>& message,
                             boost::optional<std::uint64_t> body_limit);
};

Status HttpsTransport::Impl::Configure() {
  beast::error_code ec;
  // TLS 1.2 is the oldest version a Kubernetes API server accepts by default, and the oldest
  // strata will speak.
  SSL_CTX_set_min_proto_version(tls.native_handle(), TLS1_2_VERSION);
  tls.set_verify_mode(ssl::verify_peer, ec);
  if (ec) return InternalError("TLS: cannot require peer verification: " + ec.message());
  if (endpoint.ca_pem.empty()) {
    tls.set_default_verify_paths(ec);
    if (ec) return InvalidArgumentError("TLS: cannot load the system's CAs: " + ec.message());
  } else {
    tls.add_certificate_authority(asio::buffer(endpoint.ca_pem), ec);
    if (ec) return InvalidArgumentError("TLS: the CA certificate does not load: " + ec.message());
  }
  if (!endpoint.client_certificate_pem.empty()) {
    tls.use_certificate_chain(asio::buffer(endpoint.client_certificate_pem), ec);
    if (ec) {
      return InvalidArgumentError("TLS: the client certificate does not load: " + ec.message());
    }
    tls.use_private_key(asio::buffer(endpoint.client_key_pem), ssl::context::pem, ec);
    if (ec) return InvalidArgumentError("TLS: the client key does not load: " + ec.message());
    if (SSL_CTX_check_private_key(tls.native_handle()) != 1) {
      return InvalidArgumentError("TLS: the client key does not match the client certificate");
    }
  }
  return Status::Ok();
}

std::unique_ptr<Connection> HttpsTransport::Impl::TakeIdle() {
  std::lock_guard lock(mutex);
  SteadyTime now = std::chrono::steady_clock::now();
  while (!idle.empty()) {
    std::unique_ptr<Connection> connection = std::move(idle.back());
    idle.pop_back();
    if (now - connection->idle_since < options.max_connection_idle) return connection;
  }
  return nullptr;
}

void HttpsTransport::Impl::ReturnIdle(std::unique_ptr<Connection> connection) {
  connection->idle_since = std::chrono::steady_clock::now();
  beast::get_lowest_layer(connection->stream).expires_never();
  std::lock_guard lock(mutex);
  if (idle.size() < options.max_idle_connections) idle.push_back(std::move(connection));
}

awaitable<Status> HttpsTransport::Impl::Connect(Connection& connection) {
  tcp::resolver resolver(connection.io);
  auto [resolve_error, endpoints] = co_await resolver.async_resolve(
      endpoint.host, std::to_string(endpoint.port), tcp::resolver::numeric_service, kTuple);
  if (resolve_error) co_return Failure(resolve_error, "cannot resolve");
  beast::tcp_stream& tcp_layer = beast::get_lowest_layer(connection.stream);
  tcp_layer.expires_after(options.connect_timeout);
  auto [connect_error, connected] = co_await tcp_layer.async_connect(endpoints, kTuple);
  if (connect_error) co_return Failure(connect_error, "cannot connect to");
  beast::error_code ignored;
  tcp_layer.socket().set_option(tcp::no_delay(true), ignored);
  tcp_layer.socket().set_option(asio::socket_base::keep_alive(true), ignored);

  const std::string& name = endpoint.server_name.empty() ? endpoint.host : endpoint.server_name;
  SSL* ssl = connection.stream.native_handle();
  X509_VERIFY_PARAM* verify = SSL_get0_param(ssl);
  if (IsIpAddress(name)) {
    X509_VERIFY_PARAM_set1_ip_asc(verify, name.c_str());
  } else {
    // Server Name Indication is for DNS names only (RFC 6066).
    SSL_set_tlsext_host_name(ssl, name.c_str());
    X509_VERIFY_PARAM_set_hostflags(verify, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    X509_VERIFY_PARAM_set1_host(verify, name.c_str(), name.size());
  }
  auto [handshake_error] =
      co_await connection.stream.async_handshake(ssl::stream_base::client, kTuple);
  if (handshake_error) {
    if (handshake_error == beast::error::timeout) co_return Failure(handshake_error, "TLS with");
    co_return UnavailableError("TLS handshake with API server " + address +
                               " failed: " + TlsFailure(handshake_error, ssl));
  }
  co_return Status::Ok();
}

Result<std::unique_ptr<Connection>> HttpsTransport::Impl::NewConnection() {
  auto connection = std::make_unique<Connection>(tls);
  ++connections_opened;
  Status connected = RunToCompletion(connection->io, Connect(*connection));
  if (!connected.ok()) return Err(connected);
  return connection;
}

awaitable<Status> HttpsTransport::Impl::WriteAndReadHead(Connection& connection,
                                                         http::request<http::string_body>& message,
                                                         Parser& parser) {
  beast::tcp_stream& tcp_layer = beast::get_lowest_layer(connection.stream);
  tcp_layer.expires_after(options.idle_timeout);
  auto [write_error, written] = co_await http::async_write(connection.stream, message, kTuple);
  if (write_error) co_return Failure(write_error, "sending to");
  tcp_layer.expires_after(options.idle_timeout);
  auto [read_error, read] =
      co_await http::async_read_header(connection.stream, connection.buffer, parser, kTuple);
  if (read_error) co_return Failure(read_error, "reading from");
  co_return Status::Ok();
}

awaitable<Status> HttpsTransport::Impl::ReadBody(Connection& connection, Parser& parser,
                                                 std::string& body) {
  beast::tcp_stream& tcp_layer = beast::get_lowest_layer(connection.stream);
  char piece[16 * 1024];
  while (!parser.is_done()) {
    parser.get().body().data = piece;
    parser.get().body().size = sizeof(piece);
    tcp_layer.expires_after(options.idle_timeout);
    auto [ec, n] =
        co_await http::async_read_some(connection.stream, connection.buffer, parser, kTuple);
    if (ec == http::error::need_buffer) ec = {};
    if (ec == http::error::body_limit) {
      co_return ResourceExhaustedError("response from API server " + address + " is larger than " +
                                       std::to_string(options.max_response_bytes) + " bytes");
    }
    if (ec) co_return Failure(ec, "reading the response of");
    body.append(piece, sizeof(piece) - parser.get().body().size);
  }
  co_return Status::Ok();
}

Result<HttpsTransport::Impl::Exchanged> HttpsTransport::Impl::Exchange(
    http::request<http::string_body>& message, boost::optional<std::uint64_t> body_limit) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    Exchanged exchanged;
    exchanged.connection = TakeIdle();
    bool reused = exchanged.connection != nullptr;
    if (!reused) {
      ASSIGN_OR_RETURN(exchanged.connection, NewConnection());
    }
    exchanged.parser = std::make_unique<Parser>();
    exchanged.parser->body_limit(body_limit);
    Status sent =
        RunToCompletion(exchanged.connection->io,
                        WriteAndReadHead(*exchanged.connection, message, *exchanged.parser));
    if (sent.ok()) return exchanged;
    // A kept-alive connection that the server closed while it sat in the pool: the server
    // closes only idle connections, before reading a request, so sending again is safe.
    if (!reused || sent.code() != StatusCode::kUnavailable) return Err(sent);
  }
  return Err(
      UnavailableError("request to API server " + address + ": the connection closed twice"));
}

HttpsTransport::HttpsTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpsTransport::~HttpsTransport() = default;

Result<std::unique_ptr<HttpsTransport>> HttpsTransport::Create(const TlsEndpoint& endpoint,
                                                               const TransportOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->endpoint = endpoint;
  impl->options = options;
  bool ipv6 = endpoint.host.find(':') != std::string::npos;
  impl->address =
      (ipv6 ? "[" + endpoint.host + "]" : endpoint.host) + ":" + std::to_string(endpoint.port);
  Status configured = impl->Configure();
  if (!configured.ok()) return Err(configured);
  return std::unique_ptr<HttpsTransport>(new HttpsTransport(std::move(impl)));
}

const std::string& HttpsTransport::address() const { return impl_->address; }

size_t HttpsTransport::IdleConnections() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->idle.size();
}

uint64_t HttpsTransport::ConnectionsOpened() const { return impl_->connections_opened.load(); }

Result<net::HttpResponse> HttpsTransport::Send(const net::HttpRequest& request) {
  http::request<http::string_body> message = ToBeast(request, impl_->address);
  ASSIGN_OR_RETURN(Impl::Exchanged exchanged,
                   impl_->Exchange(message, impl_->options.max_response_bytes));
  net::HttpResponse response;
  CopyHead(*exchanged.parser, response);
  Status read =
      RunToCompletion(exchanged.connection->io,
                      impl_->ReadBody(*exchanged.connection, *exchanged.parser, response.body));
  if (!read.ok()) return Err(read);
  if (exchanged.parser->get().keep_alive()) impl_->ReturnIdle(std::move(exchanged.connection));
  return response;
}

// ---- ResponseStream ------------------------------------------------------------------------

struct ResponseStream::Impl {
  std::unique_ptr<Parser> parser;  // declared first: outlives the connection and its I/O
  std::unique_ptr<Connection> connection;
  std::string address;
  net::HttpResponse head;
  std::atomic<bool> cancelled{false};
  bool read_pending = false;  // an async_read_some is outstanding on the connection
  bool finished = false;
  beast::error_code read_error;
  char piece[16 * 1024];
};

ResponseStream::ResponseStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResponseStream::~ResponseStream() = default;

const net::HttpResponse& ResponseStream::head() const { return impl_->head; }

void ResponseStream::Cancel() {
  impl_->cancelled = true;
  Connection* connection = impl_->connection.get();
  asio::post(connection->io, [connection] {
    beast::error_code ignored;
    beast::get_lowest_layer(connection->stream).socket().close(ignored);
  });
}

Result<std::string> ResponseStream::Read(Duration timeout) {
  Impl& s = *impl_;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (s.cancelled)
      return Err(CancelledError("stream from API server " + s.address + " was cancelled"));
    if (s.finished) return std::string();
    if (!s.read_pending) {
      s.parser->get().body().data = s.piece;
      s.parser->get().body().size = sizeof(s.piece);
      s.read_pending = true;
      http::async_read_some(s.connection->stream, s.connection->buffer, *s.parser,
                            [&s](beast::error_code ec, size_t) {
                              s.read_pending = false;
                              s.read_error = ec;
                            });
    }
    auto now = std::chrono::steady_clock::now();
    s.connection->io.restart();
    if (now < deadline) {
      s.connection->io.run_for(deadline - now);
    } else {
      s.connection->io.poll();  // a zero timeout still takes what has arrived
    }
    if (s.read_pending) {
      if (s.cancelled) continue;
      if (std::chrono::steady_clock::now() >= deadline) {
        return Err(DeadlineExceededError("nothing from API server " + s.address + " in time"));
      }
      continue;
    }
    beast::error_code ec = s.read_error;
    if (ec == http::error::need_buffer) ec = {};
    if (ec) {
      if (s.cancelled) continue;
      s.finished = true;
      return Err(
          UnavailableError("stream from API server " + s.address + " broke: " + ec.message()));
    }
    size_t size = sizeof(s.piece) - s.parser->get().body().size;
    if (s.parser->is_done()) s.finished = true;
    if (size > 0) return std::string(s.piece, size);
  }
}

Result<std::unique_ptr<ResponseStream>> HttpsTransport::Open(const net::HttpRequest& request) {
  http::request<http::string_body> message = ToBeast(request, impl_->address);
  auto stream = std::make_unique<ResponseStream::Impl>();
  stream->address = impl_->address;
  ASSIGN_OR_RETURN(Impl::Exchanged exchanged, impl_->Exchange(message, boost::none));
  stream->connection = std::move(exchanged.connection);
  stream->parser = std::move(exchanged.parser);
  // The body of a watch may stay silent for minutes; its reader decides how long to wait.
  beast::get_lowest_layer(stream->connection->stream).expires_never();
  CopyHead(*stream->parser, stream->head);
  if (stream->parser->is_done()) stream->finished = true;
  return std::make_unique<ResponseStream>(std::move(stream));
}

}  // namespace strata::kube
