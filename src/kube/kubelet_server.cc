#include "kube/kubelet_server.h"

#include <openssl/ssl.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <thread>

#include "net/self_signed_certificate.h"

namespace strata::kube {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using asio::awaitable;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr auto kPollInterval = std::chrono::seconds(1);
constexpr size_t kMaxHeaderBytes = 16 * 1024;

int FromHex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoding of a path segment or query part ('+' is a space in the query only).
std::string Decode(std::string_view text, bool query) {
  std::string decoded;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      int high = FromHex(text[i + 1]);
      int low = FromHex(text[i + 2]);
      if (high >= 0 && low >= 0) {
        decoded += static_cast<char>(high * 16 + low);
        i += 2;
        continue;
      }
    }
    decoded += query && text[i] == '+' ? ' ' : text[i];
  }
  return decoded;
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// The request of a GET target "/containerLogs/NS/POD/CONTAINER?QUERY"; nullopt for any other.
std::optional<ContainerLogRequest> ParseTarget(std::string_view target) {
  size_t mark = target.find('?');
  std::string_view path = target.substr(0, mark);
  std::vector<std::string_view> segments = Split(path, '/');
  if (segments.size() != 5 || !segments[0].empty() || segments[1] != "containerLogs") {
    return std::nullopt;
  }
  ContainerLogRequest request;
  request.namespace_name = Decode(segments[2], false);
  request.pod = Decode(segments[3], false);
  request.container = Decode(segments[4], false);
  if (request.namespace_name.empty() || request.pod.empty() || request.container.empty()) {
    return std::nullopt;
  }
  if (mark != std::string_view::npos) {
    for (std::string_view pair : Split(target.substr(mark + 1), '&')) {
      if (pair.empty()) continue;
      size_t equals = pair.find('=');
      request.query[Decode(pair.substr(0, equals), true)] =
          equals == std::string_view::npos ? "" : Decode(pair.substr(equals + 1), true);
    }
  }
  return request;
}

// The verified client certificate's subject: CN as the user, each O as a group (as the API
// server reads client certificates).
KubeletCaller CallerOf(SSL* ssl) {
  KubeletCaller caller;
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr) return caller;
  X509_NAME* subject = X509_get_subject_name(cert);
  for (int i = 0; i < X509_NAME_entry_count(subject); ++i) {
    X509_NAME_ENTRY* entry = X509_NAME_get_entry(subject, i);
    int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry));
    unsigned char* text = nullptr;
    int length = ASN1_STRING_to_UTF8(&text, X509_NAME_ENTRY_get_data(entry));
    if (length < 0) continue;
    std::string value(reinterpret_cast<char*>(text), static_cast<size_t>(length));
    OPENSSL_free(text);
    if (nid == NID_commonName) caller.user = value;
    if (nid == NID_organizationName) caller.groups.push_back(value);
  }
  return caller;
}

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One client connection, shared by the coroutine answering it and, while a log is followed,
// the one watching for the client to hang up.
struct Connection {
  Connection(tcp::socket socket, ssl::context& tls) : stream(std::move(socket), tls) {}
  TlsStream stream;
  beast::flat_buffer buffer;
  bool gone = false;
};

}  // namespace

struct KubeletServer::Impl {
  explicit Impl(KubeletServerOptions given) : options(std::move(given)) {}

  awaitable<void> Accept() {
    for (;;) {
      auto [error, socket] = co_await acceptor.async_accept(kTuple);
      if (error == asio::error::operation_aborted || !acceptor.is_open()) co_return;
      if (error) continue;
      if (connections.load() >= options.max_connections) continue;  // closed as it goes
      ++connections;
      auto connection = std::make_shared<Connection>(std::move(socket), tls);
      asio::co_spawn(io, Serve(connection), [this](std::exception_ptr) { --connections; });
    }
  }

  awaitable<void> Serve(std::shared_ptr<Connection> connection) {
    TlsStream& stream = connection->stream;
    beast::get_lowest_layer(stream).expires_after(options.request_timeout);
    auto [handshake] = co_await stream.async_handshake(ssl::stream_base::server, kTuple);
    if (handshake) co_return;  // no certificate the CA signed, or not TLS at all
    const KubeletCaller caller = CallerOf(stream.native_handle());
    for (;;) {
      beast::get_lowest_layer(stream).expires_after(options.request_timeout);
      http::request_parser<http::empty_body> parser;
      parser.header_limit(kMaxHeaderBytes);
      auto [read, bytes] = co_await http::async_read(stream, connection->buffer, parser, kTuple);
      if (read) co_return;
      const http::request<http::empty_body>& request = parser.get();
      std::optional<ContainerLogRequest> logs = ParseTarget(request.target());
      ContainerLogReply reply;
      if (request.method() != http::verb::get) {
        reply.status = 405;
        reply.message = "only GET is served";
      } else if (!logs) {
        reply.status = 404;
        reply.message = "not found: this node serves /containerLogs/{namespace}/{pod}/{container}";
      } else if (Status allowed = options.authorize(caller, *logs); !allowed.ok()) {
        reply.status = 403;
        reply.message = allowed.message();
      } else {
        reply = options.container_logs(*logs);
      }
      if (reply.status != 200 || !reply.read) {
        http::response<http::string_body> answer{static_cast<http::status>(reply.status),
                                                 request.version()};
        answer.set(http::field::content_type, "text/plain; charset=utf-8");
        answer.body() = reply.message + "\n";
        answer.keep_alive(request.keep_alive());
        answer.prepare_payload();
        auto [write, written] = co_await http::async_write(stream, answer, kTuple);
        if (write || !request.keep_alive()) co_return;
        continue;
      }
      co_await Stream(connection, reply, request.version());
      co_return;  // a streamed body ends the connection
    }
  }

  // Writes a 200 with a chunked body from `reply.read` until it finishes, the client hangs up,
  // or a write stalls for the request timeout.
  awaitable<void> Stream(std::shared_ptr<Connection> connection, const ContainerLogReply& reply,
                         unsigned version) {
    TlsStream& stream = connection->stream;
    http::response<http::empty_body> head{http::status::ok, version};
    head.set(http::field::content_type, "text/plain; charset=utf-8");
    head.chunked(true);
    http::response_serializer<http::empty_body> serializer{head};
    beast::get_lowest_layer(stream).expires_after(options.request_timeout);
    auto [head_error, head_bytes] = co_await http::async_write_header(stream, serializer, kTuple);
    if (head_error) co_return;
    // The client's only traffic now is its hanging up.
    auto hang_up = std::make_shared<asio::steady_timer>(io);
    asio::co_spawn(
        io,
        [connection, hang_up]() -> awaitable<void> {
          char byte;
          co_await connection->stream.async_read_some(asio::buffer(&byte, 1), kTuple);
          connection->gone = true;
          hang_up->cancel();
        },
        asio::detached);
    for (;;) {
      bool finished = false;
      std::string piece = reply.read(&finished);
      if (!piece.empty()) {
        beast::get_lowest_layer(stream).expires_after(options.request_timeout);
        auto [write, written] =
            co_await asio::async_write(stream, http::make_chunk(asio::buffer(piece)), kTuple);
        if (write) co_return;
      }
      if (finished) {
        beast::get_lowest_layer(stream).expires_after(options.request_timeout);
        co_await asio::async_write(stream, http::make_chunk_last(), kTuple);
        co_return;
      }
      if (connection->gone) co_return;
      if (piece.empty()) {
        beast::get_lowest_layer(stream).expires_never();
        hang_up->expires_after(kPollInterval);
        co_await hang_up->async_wait(kTuple);
        if (connection->gone) co_return;
      }
    }
  }

  KubeletServerOptions options;
  ssl::context tls{ssl::context::tls_server};  // outlives io, whose streams use it
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::atomic<size_t> connections{0};
  std::thread thread;
  bool stopped = false;
};

Result<std::unique_ptr<KubeletServer>> KubeletServer::Start(KubeletServerOptions options) {
  if (options.client_ca_pem.empty()) {
    return Err(InvalidArgumentError("the kubelet endpoint needs the CA of its clients"));
  }
  if (options.certificate_pem.empty() != options.key_pem.empty()) {
    return Err(InvalidArgumentError(
        "the kubelet endpoint's serving certificate and key go together: give both or neither"));
  }
  if (options.certificate_pem.empty()) {
    ASSIGN_OR_RETURN(auto made, net::SelfSignedCertificate(options.host));
    options.certificate_pem = std::move(made.first);
    options.key_pem = std::move(made.second);
  }
  auto impl = std::make_unique<Impl>(std::move(options));
  const KubeletServerOptions& given = impl->options;
  boost::system::error_code ec;
  impl->tls.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                            ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                            ssl::context::no_tlsv1_1,
                        ec);
  impl->tls.use_certificate_chain(asio::buffer(given.certificate_pem), ec);
  if (ec) return Err(InvalidArgumentError("the kubelet endpoint's certificate: " + ec.message()));
  impl->tls.use_private_key(asio::buffer(given.key_pem), ssl::context::pem, ec);
  if (ec) return Err(InvalidArgumentError("the kubelet endpoint's key: " + ec.message()));
  impl->tls.add_certificate_authority(asio::buffer(given.client_ca_pem), ec);
  if (ec) return Err(InvalidArgumentError("the kubelet endpoint's client CA: " + ec.message()));
  impl->tls.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);

  asio::ip::address address = asio::ip::make_address(given.host, ec);
  if (ec)
    return Err(
        InvalidArgumentError("kubelet endpoint host \"" + given.host + "\": " + ec.message()));
  tcp::endpoint endpoint(address, static_cast<uint16_t>(given.port));
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Err(UnavailableError("the kubelet endpoint cannot listen on " + given.host + ":" +
                                std::to_string(given.port) + ": " + ec.message()));
  }
  Impl* self = impl.get();
  asio::co_spawn(impl->io, self->Accept(), asio::detached);
  impl->thread = std::thread([self] { self->io.run(); });
  return std::unique_ptr<KubeletServer>(new KubeletServer(std::move(impl)));
}

KubeletServer::KubeletServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KubeletServer::~KubeletServer() { Stop(); }

int KubeletServer::port() const { return impl_->acceptor.local_endpoint().port(); }

void KubeletServer::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  // The connections' coroutines are destroyed with the io_context, closing their sockets.
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace strata::kube
