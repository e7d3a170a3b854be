// One client connection of the gateway: strict HTTP/1.1 reading (net/http_request_parser.h, in
// place in the connection's buffer) with size limits and idle/read deadlines, then each request
// served in turn: inference calls (inference_call.h), the model list, health and metrics.

#include <fmt/format.h>

#include <optional>
#include <string>

#include "common/check.h"
#include "gateway/http_exchange.h"
#include "gateway/inference_call.h"
#include "net/http_request_parser.h"

namespace strata::gateway {
namespace {

// Bytes asked of the socket per read while a request head (or a chunked body) arrives.
constexpr size_t kReadBytes = 16 * 1024;
// A connection's buffer grown beyond this for a large request is released once it is served.
constexpr size_t kKeptBufferBytes = 64 * 1024;
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

std::string_view ErrorCodeFor(int status) {
  switch (status) {
    case 408:
      return "request_timeout";
    case 413:
      return "body_too_large";
    case 431:
      return "header_too_large";
    case 501:
      return "not_implemented";
    case 505:
      return "http_version_not_supported";
    default:
      return "bad_request";
  }
}

constexpr std::string_view kModelPrefix = "/v1/models/";

// The {id} of GET /v1/models/{id}: the rest of the path, percent-decoded, as model names may hold
// a '/' ("meta-llama/Llama-3.1-8B") that a client may or may not have escaped.
std::string ModelIdOf(std::string_view target) {
  std::string_view path = target.substr(kModelPrefix.size());
  path = path.substr(0, path.find('?'));
  std::string id;
  id.reserve(path.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size() && hex(path[i + 1]) >= 0 && hex(path[i + 2]) >= 0) {
      id.push_back(static_cast<char>(hex(path[i + 1]) * 16 + hex(path[i + 2])));
      i += 2;
    } else {
      id.push_back(path[i]);
    }
  }
  return id;
}

// What reading one request from a client gave.
struct ReadOutcome {
  enum class Kind { kRequest, kRefused, kGone };
  Kind kind = Kind::kGone;  // kGone: closed, reset or idle past its deadline; nothing to answer
  net::RequestError error;  // kRefused: why, and the status to answer with (408: too slow)
  std::string_view body;    // kRequest
  size_t size = 0;          // kRequest: the bytes of the received buffer the request took
};

// Reads the next request of `client` into `received` (bytes of a pipelined request after it
// stay there), its head into `head` and a chunked body into `chunked`. The head's views are
// valid until `received` changes.
asio::awaitable<ReadOutcome> ReadRequest(LoopSocket& client, SocketDeadline& deadline,
                                         const LimitsConfig& limits, beast::flat_buffer& received,
                                         net::RequestHead& head,
                                         std::optional<net::ChunkedBodyDecoder>& chunked) {
  ReadOutcome outcome;
  auto refuse = [&outcome](net::RequestError error) {
    outcome.kind = ReadOutcome::Kind::kRefused;
    outcome.error = std::move(error);
    return outcome;
  };
  // A read that failed: past the read deadline the socket is still open, and the client is told
  // with a 408; otherwise the client is gone (or was idle past the idle deadline: closed).
  auto failed = [&]() {
    if (!deadline.expired() || !client.is_open()) return outcome;
    return refuse(
        {408,
         fmt::format(
             "request not received whole within {} ms",
             std::chrono::duration_cast<std::chrono::milliseconds>(limits.read_timeout).count())});
  };
  constexpr auto kEndRead = SocketDeadline::OnExpiry::kEndRead;
  // The head: parsed again only when new bytes end a line (or pass the limit), so a head that
  // trickles in is not rescanned per byte.
  bool parse = received.size() > 0;
  // From its first byte the request has read_timeout to arrive whole (a head that trickles in
  // had the idle timeout); until then the connection is idle, under the caller's deadline.
  if (parse) deadline.ExpiresAfter(limits.read_timeout, kEndRead);
  while (true) {
    if (parse) {
      net::ParseResult parsed = net::ParseRequestHead(Contents(received), limits.max_header_bytes,
                                                      limits.max_body_bytes, &head);
      if (!parsed) co_return refuse(std::move(parsed.error()));
      if (*parsed == net::ParseProgress::kDone) break;
    }
    auto [error, n] = co_await client.ReadSome(received.prepare(kReadBytes));
    if (error) co_return failed();
    if (received.size() == 0) deadline.ExpiresAfter(limits.read_timeout, kEndRead);
    received.commit(n);
    parse = Contents(received).substr(received.size() - n).find('\n') != std::string_view::npos ||
            received.size() > limits.max_header_bytes;
  }
  const size_t head_size = head.size;
  bool read_body = false;  // reading may move the buffer, and with it the head's views
  if (head.chunked) {
    chunked.emplace(limits.max_body_bytes, limits.max_header_bytes);
    while (true) {
      net::ParseResult fed = chunked->Feed(Contents(received).substr(head_size), head_size);
      if (!fed) co_return refuse(std::move(fed.error()));
      if (*fed == net::ParseProgress::kDone) break;
      if (head.expect_continue && !read_body) {
        if (co_await client.WriteAll(asio::buffer(kContinue))) co_return outcome;
      }
      auto [error, n] = co_await client.ReadSome(received.prepare(kReadBytes));
      if (error) co_return failed();
      received.commit(n);
      read_body = true;
    }
    outcome.body = chunked->body();
    outcome.size = head_size + chunked->consumed();
  } else {
    const size_t size = head_size + static_cast<size_t>(head.content_length.value_or(0));
    if (head.expect_continue && received.size() < size) {
      if (co_await client.WriteAll(asio::buffer(kContinue))) co_return outcome;
    }
    while (received.size() < size) {
      auto [error, n] = co_await client.ReadSome(received.prepare(size - received.size()));
      if (error) co_return failed();
      received.commit(n);
      read_body = true;
    }
    outcome.body = Contents(received).substr(head_size, size - head_size);
    outcome.size = size;
  }
  if (read_body) {
    // Same bytes, same result; only the views move to where the buffer now holds them.
    net::ParseResult again = net::ParseRequestHead(Contents(received), limits.max_header_bytes,
                                                   limits.max_body_bytes, &head);
    STRATA_CHECK(again.has_value() && *again == net::ParseProgress::kDone);
  }
  outcome.kind = ReadOutcome::Kind::kRequest;
  co_return outcome;
}

// Answers a request that is not an inference call. Returns whether to keep the connection.
asio::awaitable<bool> ServeLocal(GatewayServer::Impl& server, LoopSocket& client,
                                 const ClientRequest& request) {
  const bool keep = request.head.keep_alive;
  const std::string_view method = request.head.method;
  const std::string_view target = request.head.target;
  // The model list is OpenAI's API too: with tenants, it takes a key, as the inference calls do.
  if (method == "GET" && target.starts_with("/v1/models")) {
    std::shared_ptr<const TenantTable> tenants = server.tenants.load();
    if (tenants->authenticates() && tenants->Find(request.head.Field("authorization")) == nullptr) {
      co_return co_await RespondError(client, 401, "missing or unknown API key", "invalid_api_key",
                                      keep);
    }
  }
  if (method == "GET" && target == "/v1/models") {
    co_return co_await Respond(client, 200, server.table.load()->router.ModelsListBody(), keep);
  }
  if (method == "GET" && target.starts_with(kModelPrefix)) {
    const std::string id = ModelIdOf(target);
    const std::string* body = server.table.load()->router.ModelBody(id);
    if (body != nullptr) co_return co_await Respond(client, 200, *body, keep);
    co_return co_await RespondError(client, 404, fmt::format("The model '{}' does not exist", id),
                                    "model_not_found", keep, std::nullopt, "model");
  }
  if (method == "GET" && target == "/healthz") {
    co_return co_await Respond(client, 200, "ok\n", keep, "text/plain");
  }
  if (method == "GET" && target == "/metrics") {
    co_return co_await Respond(client, 200, RenderMetrics(server), keep,
                               "text/plain; version=0.0.4; charset=utf-8");
  }
  co_return co_await RespondError(client, 404, fmt::format("no route for {} {}", method, target),
                                  "not_found", keep);
}

}  // namespace

asio::awaitable<void> ServeConnection(GatewayServer::Impl& server, Worker& worker,
                                      std::unique_ptr<LoopSocket> client) {
  LoopSocket& socket = *client;
  SocketDeadline deadline(worker.deadlines, socket);
  const LimitsConfig& limits = server.config.limits;
  beast::flat_buffer received;
  net::RequestHead head;
  std::optional<net::ChunkedBodyDecoder> chunked;
  while (!server.stopped.load()) {
    deadline.ExpiresAfter(limits.idle_timeout);
    const ReadOutcome read =
        co_await ReadRequest(socket, deadline, limits, received, head, chunked);
    if (read.kind == ReadOutcome::Kind::kGone) break;
    if (read.kind == ReadOutcome::Kind::kRefused) {
      // The refusal gets as long to be written as a request to be read.
      deadline.ExpiresAfter(limits.read_timeout);
      co_await RespondError(socket, read.error.http_status, read.error.message,
                            ErrorCodeFor(read.error.http_status), false);
      break;
    }
    // Answering has no deadline: a stream lasts as long as the engine generates.
    deadline.ExpiresNever();
    const ClientRequest request{head, read.body};
    bool keep = false;
    if (head.method == "POST" && head.target == "/v1/chat/completions") {
      keep =
          co_await InferenceCall(server, worker, socket, request, ApiKind::kChatCompletions).Run();
    } else if (head.method == "POST" && head.target == "/v1/completions") {
      keep = co_await InferenceCall(server, worker, socket, request, ApiKind::kCompletions).Run();
    } else {
      keep = co_await ServeLocal(server, socket, request);
    }
    received.consume(read.size);
    chunked.reset();
    if (received.size() == 0 && received.capacity() > kKeptBufferBytes) received.shrink_to_fit();
    if (!keep) break;
  }
  socket.ShutdownSend();
}

}  // namespace strata::gateway
