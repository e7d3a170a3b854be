#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "net/http_message.h"

namespace strata::net {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;     // 0: the kernel picks one; see HttpServer::port()
  int threads = 1;  // event-loop threads, one io_context each, sharing the port (SO_REUSEPORT)
  size_t max_header_bytes = 16 * 1024;      // larger: 431
  size_t max_body_bytes = 8 * 1024 * 1024;  // larger: 413
  // Receiving one whole request (head and body), from its first byte; exceeded: a 408 answer,
  // then the connection closes.
  Duration read_timeout = std::chrono::seconds(30);
  // A connection waiting for the first byte of its next request; exceeded: the connection
  // closes without an answer.
  Duration idle_timeout = std::chrono::seconds(60);
  // The serving certificate (its chain, PEM) and its private key (PEM): both set, the server
  // speaks HTTPS (TLS 1.2 or later) only; both empty, plain HTTP.
  std::string tls_certificate_pem;
  std::string tls_key_pem;
  // The body of an answer the server gives itself (400, 404, 405, 408, 413, 431) from its status
  // and a message saying why; unset: an OpenAI-shaped error object.
  std::function<HttpResponse(int status, const std::string& message)> error_response = nullptr;
};

// How a handler answers one request: either Respond once, or StartStream, any number of
// WriteChunk, then EndStream (chunked transfer encoding; each chunk is written as soon as the
// socket takes it, so server-sent events arrive one by one). Every method is thread-safe and
// returns at once; the writing happens on the connection's event loop. Calls after the client
// went away, or after the response is complete, do nothing.
//
// Shared by the handler and the connection (copies refer to the same response). A handler
// that never answers keeps the connection open until the server stops.
class ResponseWriter {
 public:
  struct State;
  explicit ResponseWriter(std::shared_ptr<State> state) : state_(std::move(state)) {}

  void Respond(HttpResponse response);
  // Content-Type for server-sent events is "text/event-stream".
  void StartStream(int status, HttpHeaders headers);
  // REQUIRES: StartStream was called. Empty data is skipped (an empty chunk ends a stream).
  void WriteChunk(std::string data);
  void EndStream();

  // Runs `on_close` once, on the connection's event loop, if the client disconnects before the
  // response is complete (a cancelled stream). Replaces an earlier callback.
  void OnClientGone(std::function<void()> on_close);
  // Whether the client is known to have gone.
  bool ClientGone() const;

 private:
  std::shared_ptr<State> state_;
};

using HttpHandler = std::function<void(HttpRequest request, ResponseWriter writer)>;

// An HTTP/1.1 server on Boost.Beast with C++20 coroutines, over TCP or TLS: keep-alive, exact
// method + path routing (404 for an unknown path, 405 for a known path with another method), header
// and body limits, 400 for an HTTP/1.1 request without exactly one Host field, read (408) and idle
// timeouts, streaming responses and graceful stop. Handlers run on the event-loop thread of their
// connection and must not block it.
//
// Owned by whoever serves; Route before Start. Start, Stop, Post and PostAfter are thread-safe.
class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();  // Stop(0) if running
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // REQUIRES: not started.
  void Route(std::string method, std::string path, HttpHandler handler);
  // Serves every request no route matches (instead of 404, or 405 for a routed path with
  // another method), for a handler that routes by itself. REQUIRES: not started.
  void Fallback(HttpHandler handler);

  // Binds host:port and starts the event-loop threads. Returns InvalidArgument for a bad host,
  // Unavailable when the address cannot be bound (naming it and the reason).
  Status Start();

  // The bound port (the real one when options.port was 0). REQUIRES: Start succeeded.
  int port() const { return port_; }

  // Runs `task` on the first event loop (the one thread when threads == 1), after `delay`.
  // Tasks still pending when the server stops are dropped.
  void Post(std::function<void()> task);
  void PostAfter(Duration delay, std::function<void()> task);
  // A function that does what Post does, callable from any thread at any time: also after Stop,
  // and after the server is destroyed, when the task is dropped. For callbacks the server does
  // not own (a watch's wake, called by whoever feeds the watch). REQUIRES: Start succeeded.
  std::function<void(std::function<void()>)> Poster() const;

  // Stops accepting, lets responses in progress finish for up to `grace`, then closes every
  // connection and joins the threads. Idempotent. REQUIRES: not called from a handler or task
  // (it joins the threads they run on).
  void Stop(Duration grace = std::chrono::seconds(5));

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace strata::net
