#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "api/validation.h"
#include "common/clock.h"
#include "common/status.h"
#include "net/http_message.h"

namespace strata::server {

// A response body produced over time (a watch), read by the listener as it becomes ready.
// Owned by the listener's connection for the life of the response. Read and SetWake are called
// from the listener's event-loop thread only; the wake callback may be called from any thread.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;

  // Registers `wake`, to be called (from any thread, cheaply, without calling back into this
  // stream) whenever Read may return more.
  virtual void SetWake(std::function<void()> wake) = 0;

  // Returns what is ready now, possibly nothing. Sets *finished once the stream is over (the
  // returned text is its last). Also called about once per second without a wake, so a stream
  // can end on a deadline or send a heartbeat.
  virtual std::string Read(bool* finished) = 0;
};

// What the REST API answers: a whole response, or the head of a chunked one whose body comes
// from `stream`.
struct ApiReply {
  net::HttpResponse response;
  std::unique_ptr<ResponseStream> stream;
};

// A whole response of `body` as application/json.
ApiReply JsonReply(int code, const nlohmann::json& body);
// A whole response of `json`, already written as JSON text.
ApiReply JsonTextReply(int code, std::string json);

using ApiHandler = std::function<ApiReply(const net::HttpRequest& request)>;

struct ApiListenerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: the kernel picks one; see ApiListener::port()
  size_t max_header_bytes = 64 * 1024;
  size_t max_body_bytes =
      api::kMaxRequestBytes;  // larger: 413 with a Status object (Kubernetes' limit)
  Duration idle_timeout = std::chrono::seconds(120);
  // A serving certificate and its key (PEM): HTTPS instead of HTTP (net::HttpServerOptions).
  std::string tls_certificate_pem;
  std::string tls_key_pem;
};

// The control plane's HTTP/1.1 front: a net::HttpServer with one event loop (keep-alive,
// header/body limits, idle timeout) that hands every request to one handler (the REST API
// routes by path prefix itself) and writes whole or chunked streaming responses, its own
// refusals (400, 408, 413, 431) as Status objects. A streaming response ends when its stream
// finishes, when the client hangs up, or at Stop.
//
// Owned by the control plane. Start and Stop are called from one thread; the handler runs on
// the listener's thread and must not block for long.
class ApiListener {
 public:
  ApiListener(ApiListenerOptions options, ApiHandler handler);
  ~ApiListener();  // Stop()
  ApiListener(const ApiListener&) = delete;
  ApiListener& operator=(const ApiListener&) = delete;

  // Binds host:port and starts the event-loop thread. Returns InvalidArgument for a host that
  // is not an IP address, Unavailable when the address cannot be bound (naming it).
  Status Start();

  // The bound port. REQUIRES: Start succeeded.
  int port() const { return port_; }

  // Closes the listening socket and every connection, then joins the thread. Idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace strata::server
