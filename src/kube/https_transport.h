#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "net/http_message.h"

// HTTP/1.1 over TLS to one server, for the Kubernetes client. Boost.Asio/Beast and OpenSSL stay
// inside https_transport.cc.

namespace strata::kube {

// The server and the TLS material of a connection. PEM text throughout.
struct TlsEndpoint {
  std::string host;  // a DNS name or an IP address (IPv6 without brackets)
  int port = 443;
  // The name the server's certificate must carry (DNS name or IP); empty: `host`.
  std::string server_name;
  // Trusted CAs; empty: the system's default trust store.
  std::string ca_pem;
  // Client certificate (chain) and key, both or neither.
  std::string client_certificate_pem;
  std::string client_key_pem;
};

struct TransportOptions {
  Duration connect_timeout = std::chrono::seconds(10);  // TCP connect and TLS handshake
  // The longest wait for any progress while sending a request or reading a response (not for
  // ResponseStream::Read, which takes its own timeout).
  Duration idle_timeout = std::chrono::seconds(60);
  size_t max_response_bytes = 512 * 1024 * 1024;
  size_t max_idle_connections = 16;
  // A kept-alive connection unused for this long is closed rather than reused (servers close
  // idle connections; a request on one that was closed meanwhile would have to be retried).
  Duration max_connection_idle = std::chrono::seconds(45);
};

// The body of one response, read as it arrives (a watch). Owned by the caller; its methods are
// called from one thread at a time, except Cancel. Closing it closes its connection.
class ResponseStream {
 public:
  ~ResponseStream();
  ResponseStream(const ResponseStream&) = delete;
  ResponseStream& operator=(const ResponseStream&) = delete;

  // Status and headers; the body is read with Read.
  const net::HttpResponse& head() const;

  // Returns the next piece of the body (chunk framing removed), waiting up to `timeout` for it.
  // Returns "" once the body has ended. Errors: DeadlineExceeded when nothing arrived within
  // `timeout` (the stream stays usable: call again); Cancelled, for good, after Cancel;
  // Unavailable when the connection broke.
  Result<std::string> Read(Duration timeout);

  // Makes a Read in progress, and every later one, return Cancelled. Thread-safe; must not race
  // with the stream's destruction.
  void Cancel();

  struct Impl;
  explicit ResponseStream(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

// A pool of kept-alive HTTPS connections to one server, verifying its certificate against the
// CA (TLS 1.2 or later, the host name or IP checked) and presenting the client certificate if
// one is given. Each call does its I/O on the calling thread, on a connection it holds alone.
//
// Owned by its Client. Thread-safe: any number of threads may send at once.
class HttpsTransport {
 public:
  // Fails with InvalidArgument when the CA or client certificate or key cannot be loaded.
  static Result<std::unique_ptr<HttpsTransport>> Create(const TlsEndpoint& endpoint,
                                                        const TransportOptions& options);
  ~HttpsTransport();
  HttpsTransport(const HttpsTransport&) = delete;
  HttpsTransport& operator=(const HttpsTransport&) = delete;

  // Sends `request` and returns the whole response, whatever its status. Host and
  // Content-Length are set. Errors: Unavailable naming the server when it cannot connect, the
  // TLS handshake fails (with OpenSSL's reason, e.g. a certificate that does not verify) or
  // the connection breaks; DeadlineExceeded when no progress is made for idle_timeout;
  // ResourceExhausted for a body over max_response_bytes. A request on a reused connection
  // that the server had closed meanwhile is sent again once on a new connection.
  Result<net::HttpResponse> Send(const net::HttpRequest& request);

  // Sends `request` and returns once the response's headers have arrived; the body is read from
  // the stream. Errors as Send's. The stream's connection is never pooled again.
  Result<std::unique_ptr<ResponseStream>> Open(const net::HttpRequest& request);

  // "127.0.0.1:6443", for messages.
  const std::string& address() const;

  // Kept-alive connections waiting in the pool.
  size_t IdleConnections() const;
  // Connections opened so far (each a TCP connect and a TLS handshake).
  uint64_t ConnectionsOpened() const;

 private:
  struct Impl;
  explicit HttpsTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::kube
