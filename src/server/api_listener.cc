#include "server/api_listener.h"

#include <atomic>

#include "api/api_status.h"
#include "net/http_server.h"

namespace strata::server {

namespace {

constexpr auto kStreamPollInterval = std::chrono::seconds(1);

net::HttpResponse StatusResponse(const Status& status, int http_code) {
  nlohmann::json body = api::StatusObject(status);
  body["code"] = http_code;
  return net::HttpResponse::Text(http_code, "application/json", body.dump());
}

// Carries one ResponseStream into a chunked response: the stream is read on the server's event
// loop when it wakes the pump and once every kStreamPollInterval without (so that it can end
// on a deadline or send a heartbeat), until it finishes or the client goes. The heartbeat's
// pending task owns the pump; the stream's wake and the writer's hang-up callback only refer
// to it.
class StreamPump : public std::enable_shared_from_this<StreamPump> {
 public:
  StreamPump(net::HttpServer& server, std::unique_ptr<ResponseStream> stream,
             net::ResponseWriter writer)
      : server_(server), stream_(std::move(stream)), writer_(std::move(writer)) {}

  // Sends the head, the stream's first output, and keeps going. On the event loop.
  void Start(int status, net::HttpHeaders headers) {
    writer_.StartStream(status, std::move(headers));
    std::weak_ptr<StreamPump> weak = weak_from_this();
    writer_.OnClientGone([weak] {
      if (std::shared_ptr<StreamPump> pump = weak.lock()) pump->Finish();
    });
    // The wake may run on any thread, and outlive the server.
    stream_->SetWake([weak, post = server_.Poster()] {
      std::shared_ptr<StreamPump> pump = weak.lock();
      if (pump == nullptr || pump->wake_pending_.exchange(true)) return;
      post([weak] {
        if (std::shared_ptr<StreamPump> alive = weak.lock()) alive->Pull();
      });
    });
    Pull();
    Heartbeat();
  }

 private:
  // Writes what the stream has now; ends the response when the stream finished.
  void Pull() {
    if (finished_) return;
    wake_pending_ = false;
    if (writer_.ClientGone()) {
      Finish();
      return;
    }
    bool finished = false;
    writer_.WriteChunk(stream_->Read(&finished));
    if (!finished) return;
    writer_.EndStream();
    Finish();
  }
  void Heartbeat() {
    if (finished_) return;
    server_.PostAfter(kStreamPollInterval, [pump = shared_from_this()] {
      pump->Pull();
      pump->Heartbeat();
    });
  }
  void Finish() {
    if (finished_) return;
    finished_ = true;
    stream_->SetWake(nullptr);
  }

  net::HttpServer& server_;  // posted to on its event loop only
  std::unique_ptr<ResponseStream> stream_;
  net::ResponseWriter writer_;
  std::atomic<bool> wake_pending_{false};
  bool finished_ = false;  // on the event loop only
};

}  // namespace

ApiReply JsonReply(int code, const nlohmann::json& body) {
  return JsonTextReply(code, body.dump());
}

ApiReply JsonTextReply(int code, std::string json) {
  return ApiReply{net::HttpResponse::Text(code, "application/json", std::move(json)), nullptr};
}

struct ApiListener::Impl {
  explicit Impl(const ApiListenerOptions& options)
      : server(net::HttpServerOptions{.host = options.host,
                                      .port = options.port,
                                      .threads = 1,
                                      .max_header_bytes = options.max_header_bytes,
                                      .max_body_bytes = options.max_body_bytes,
                                      .idle_timeout = options.idle_timeout,
                                      .tls_certificate_pem = options.tls_certificate_pem,
                                      .tls_key_pem = options.tls_key_pem,
                                      // The server's own refusals come before any handler ran.
                                      .error_response = [](int status, const std::string& message) {
                                        return StatusResponse(
                                            InvalidArgumentError(message + "; nothing was changed"),
                                            status);
                                      }}) {}

  net::HttpServer server;
};

ApiListener::ApiListener(ApiListenerOptions options, ApiHandler handler)
    : impl_(std::make_unique<Impl>(options)) {
  net::HttpServer& server = impl_->server;
  server.Fallback([&server, handler = std::move(handler)](net::HttpRequest request,
                                                          net::ResponseWriter writer) {
    ApiReply reply = handler(request);
    if (reply.stream == nullptr) {
      writer.Respond(std::move(reply.response));
      return;
    }
    auto pump = std::make_shared<StreamPump>(server, std::move(reply.stream), std::move(writer));
    pump->Start(reply.response.status, std::move(reply.response.headers));
  });
}

ApiListener::~ApiListener() { Stop(); }

Status ApiListener::Start() {
  if (Status started = impl_->server.Start(); !started.ok()) return started;
  port_ = impl_->server.port();
  return Status::Ok();
}

void ApiListener::Stop() {
  // Watches never end by themselves: no grace for responses in progress.
  impl_->server.Stop(Duration::zero());
}

}  // namespace strata::server
