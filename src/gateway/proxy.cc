// One client connection of the gateway: strict HTTP/1.1 reading with limits and timeouts,
// authentication, quota admission, routing, and the unbuffered relay to a replica with retry
// before the first byte reaches the client.

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "gateway/server_impl.h"
#include "gateway/usage.h"

namespace strata::gateway {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The estimate reserved for a request that sets no max_tokens; settled to real usage after.
constexpr int64_t kDefaultMaxTokensEstimate = 256;
constexpr Duration kConnectTimeout = std::chrono::seconds(2);
constexpr Duration kQuotaPollInterval = std::chrono::milliseconds(10);
constexpr size_t kRelayBufferBytes = 16 * 1024;
// A non-streaming answer is kept (besides being relayed) up to this size to read its usage.
constexpr size_t kMaxUsageBodyBytes = 16 * 1024 * 1024;

double Seconds(SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string ErrorBody(std::string_view message, std::string_view type, std::string_view code) {
  return nlohmann::json{{"error", {{"message", message}, {"type", type}, {"code", code}}}}.dump();
}

std::string_view ErrorType(int status) {
  if (status == 401) return "authentication_error";
  if (status == 429) return "rate_limit_exceeded";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

// Answers with a complete response. Returns false when the client is gone.
asio::awaitable<bool> Respond(beast::tcp_stream& client, int status, std::string body,
                              bool keep_alive, std::string_view content_type = "application/json",
                              std::optional<int64_t> retry_after_seconds = std::nullopt) {
  http::response<http::string_body> response{static_cast<http::status>(status), 11};
  response.set(http::field::content_type, content_type);
  if (retry_after_seconds)
    response.set(http::field::retry_after, std::to_string(*retry_after_seconds));
  response.keep_alive(keep_alive);
  response.body() = std::move(body);
  response.prepare_payload();
  auto [ec, n] = co_await http::async_write(client, response, kAsTuple);
  co_return !ec;
}

asio::awaitable<bool> RespondError(beast::tcp_stream& client, int status, std::string_view message,
                                   std::string_view code, bool keep_alive,
                                   std::optional<int64_t> retry_after_seconds = std::nullopt) {
  co_return co_await Respond(client, status, ErrorBody(message, ErrorType(status), code),
                             keep_alive, "application/json", retry_after_seconds);
}

bool IsHopByHop(http::field field) {
  switch (field) {
    case http::field::connection:
    case http::field::keep_alive:
    case http::field::transfer_encoding:
    case http::field::te:
    case http::field::upgrade:
    case http::field::proxy_authorization:
    case http::field::authorization:
    case http::field::host:
    case http::field::content_length:
      return true;
    default:
      return false;
  }
}

// Decrements a counter when the request leaves, however it leaves.
struct CountGuard {
  explicit CountGuard(std::atomic<int64_t>& counter) : counter_(counter) { counter_.fetch_add(1); }
  ~CountGuard() { counter_.fetch_sub(1); }
  CountGuard(const CountGuard&) = delete;
  CountGuard& operator=(const CountGuard&) = delete;
  std::atomic<int64_t>& counter_;
};

// The request line and header a replica gets: the client's fields less the hop-by-hop ones,
// then the replica's Host (HTTP/1.1 requires one; engines and Node's parser refuse requests
// without it) and the body's length. Written by hand: one buffer, no field-by-field allocation.
std::string UpstreamHead(const http::request<http::string_body>& request, std::string_view host) {
  fmt::memory_buffer head;
  auto out = std::back_inserter(head);
  fmt::format_to(out, "{} {} HTTP/1.1\r\n", std::string_view(request.method_string()),
                 std::string_view(request.target()));
  for (const auto& field : request) {
    if (IsHopByHop(field.name())) continue;
    fmt::format_to(out, "{}: {}\r\n", std::string_view(field.name_string()),
                   std::string_view(field.value()));
  }
  fmt::format_to(out, "Host: {}\r\nContent-Length: {}\r\n\r\n", host, request.body().size());
  return fmt::to_string(head);
}

// Feeds `parser` the bytes `buffer` already holds, without I/O: an asynchronous read of bytes
// already buffered completes through a post to the event loop, which costs more than the
// parsing. Stops when the message is done, the bytes run out, or a buffer body is full. Returns
// a parse error, or success.
template <bool kIsRequest>
beast::error_code ParseBuffered(http::basic_parser<kIsRequest>& parser,
                                beast::flat_buffer& buffer) {
  beast::error_code ec;
  while (buffer.size() > 0 && !parser.is_done()) {
    const size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == http::error::need_more || ec == http::error::need_buffer) return {};
    if (ec || used == 0) break;
  }
  return ec;
}

// Connects, sends `head` and `body` and reads the response header on `connection`. Returns
// false on any failure (the connection is then closed).
asio::awaitable<bool> Exchange(UpstreamConnection& connection, const tcp::endpoint* connect_to,
                               std::string_view head, std::string_view body,
                               http::response_parser<http::buffer_body>& parser, Duration timeout) {
  if (connect_to != nullptr) {
    connection.stream.expires_after(kConnectTimeout);
    auto [ec] = co_await connection.stream.async_connect(*connect_to, kAsTuple);
    if (ec) co_return false;
    connection.stream.socket().set_option(tcp::no_delay(true));
  }
  connection.stream.expires_after(timeout);
  const std::array<asio::const_buffer, 2> request = {asio::buffer(head), asio::buffer(body)};
  auto [write_ec, written] = co_await asio::async_write(connection.stream, request, kAsTuple);
  if (!write_ec) {
    auto [read_ec, read] =
        co_await http::async_read_header(connection.stream, connection.buffer, parser, kAsTuple);
    if (!read_ec) co_return true;
  }
  connection.stream.close();
  co_return false;
}

class InferenceCall {
 public:
  InferenceCall(GatewayServer::Impl& server, Worker& worker, beast::tcp_stream& client,
                http::request<http::string_body>& request, ApiKind kind)
      : server_(server), worker_(worker), client_(client), request_(request), kind_(kind) {}

  // Serves the request; returns whether the client connection may be reused.
  asio::awaitable<bool> Run();

 private:
  asio::awaitable<bool> Fail(int status, std::string_view message, std::string_view code,
                             std::optional<int64_t> retry_after = std::nullopt) {
    Count(status);
    co_return co_await RespondError(client_, status, message, code, request_.keep_alive(),
                                    retry_after);
  }
  void Count(int status) { worker_.stats.Requests(ids_, status).Increment(); }
  // Waits for quota. Returns the 429 answer's Retry-After seconds when refused.
  asio::awaitable<std::optional<int64_t>> Admit(size_t tenant, int64_t tokens);
  asio::awaitable<bool> Relay(UpstreamConnection& upstream,
                              http::response_parser<http::buffer_body>& parser, TokenUsage* usage,
                              bool* upstream_reusable);

  GatewayServer::Impl& server_;
  Worker& worker_;
  beast::tcp_stream& client_;
  http::request<http::string_body>& request_;
  ApiKind kind_;
  RequestLabelIds ids_;
  SteadyClock::time_point arrived_ = SteadyClock::now();
};

asio::awaitable<std::optional<int64_t>> InferenceCall::Admit(size_t tenant, int64_t tokens) {
  const PriorityClass priority = server_.config.tenants[tenant].priority;
  QuotaDecision decision = server_.ledger.Request(tenant, tokens, priority, server_.clock.Now());
  const auto queued_at = SteadyClock::now();
  const auto deadline = queued_at + server_.config.limits.max_queue_wait;
  asio::steady_timer timer(client_.get_executor());
  while (decision.kind == QuotaDecision::Kind::kQueued) {
    if (SteadyClock::now() >= deadline) {
      const Duration retry = server_.ledger.Abandon(decision.ticket, server_.clock.Now());
      decision.kind = QuotaDecision::Kind::kRejected;
      decision.retry_after = retry;
      break;
    }
    timer.expires_after(kQuotaPollInterval);
    co_await timer.async_wait(kAsTuple);
    decision = server_.ledger.Poll(decision.ticket, server_.clock.Now());
  }
  worker_.stats.QueueSeconds(ids_).Observe(Seconds(SteadyClock::now() - queued_at));
  if (decision.kind == QuotaDecision::Kind::kAdmitted) co_return std::nullopt;
  co_return std::chrono::duration_cast<std::chrono::seconds>(decision.retry_after).count();
}

asio::awaitable<bool> InferenceCall::Relay(UpstreamConnection& upstream,
                                           http::response_parser<http::buffer_body>& parser,
                                           TokenUsage* usage, bool* upstream_reusable) {
  auto& response = parser.get();
  const bool event_stream =
      std::string_view(response[http::field::content_type]).starts_with("text/event-stream");
  const bool chunked = response.chunked() || !parser.content_length().has_value();
  fmt::memory_buffer head;
  fmt::format_to(std::back_inserter(head), "HTTP/1.1 {} {}\r\n", response.result_int(),
                 std::string_view(http::obsolete_reason(response.result())));
  for (const auto& field : response) {
    if (IsHopByHop(field.name())) continue;
    fmt::format_to(std::back_inserter(head), "{}: {}\r\n", std::string_view(field.name_string()),
                   std::string_view(field.value()));
  }
  if (chunked) {
    fmt::format_to(std::back_inserter(head), "Transfer-Encoding: chunked\r\n");
  } else {
    fmt::format_to(std::back_inserter(head), "Content-Length: {}\r\n", *parser.content_length());
  }
  fmt::format_to(
      std::back_inserter(head), "{}",
      request_.keep_alive() ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n");
  client_.expires_never();
  // An event stream's header goes out at once (the client waits on it while the engine
  // prefills); any other answer's header leaves with its first body bytes, in one write.
  asio::const_buffer pending_head(head.data(), head.size());
  bool client_ok = true;
  if (event_stream || parser.is_done()) {
    auto [head_ec, head_n] = co_await asio::async_write(client_, pending_head, kAsTuple);
    client_ok = !head_ec;
    pending_head = {};
  }

  StreamUsageCounter counter;
  std::string body;
  std::array<char, kRelayBufferBytes> buffer;
  SteadyClock::time_point first_token{}, last_token{};
  bool upstream_ok = true;
  while (client_ok && !parser.is_done()) {
    response.body().data = buffer.data();
    response.body().size = buffer.size();
    beast::error_code ec = ParseBuffered(parser, upstream.buffer);
    if (!ec && response.body().size == buffer.size() && !parser.is_done()) {
      upstream.stream.expires_after(server_.config.limits.upstream_timeout);
      std::tie(ec, std::ignore) =
          co_await http::async_read_some(upstream.stream, upstream.buffer, parser, kAsTuple);
      if (ec == http::error::need_buffer) ec = {};
    }
    if (ec) {
      upstream_ok = false;
      break;
    }
    const size_t got = buffer.size() - response.body().size;
    if (got == 0) continue;
    const std::string_view piece(buffer.data(), got);
    if (event_stream) {
      const int64_t before = counter.content_chunks();
      counter.Feed(piece);
      if (counter.content_chunks() > before) {
        last_token = SteadyClock::now();
        if (before == 0) first_token = last_token;
      }
    } else {
      if (first_token == SteadyClock::time_point{}) first_token = SteadyClock::now();
      if (body.size() + got <= kMaxUsageBodyBytes) body.append(piece);
    }
    char size_line[24];
    const auto size_end = fmt::format_to_n(size_line, sizeof(size_line), "{:x}\r\n", got).out;
    const std::array<asio::const_buffer, 4> chunk = {
        pending_head, asio::buffer(size_line, static_cast<size_t>(size_end - size_line)),
        asio::buffer(piece), asio::buffer("\r\n", 2)};
    const std::array<asio::const_buffer, 2> plain = {pending_head, asio::buffer(piece)};
    auto [write_ec, written] = chunked ? co_await asio::async_write(client_, chunk, kAsTuple)
                                       : co_await asio::async_write(client_, plain, kAsTuple);
    client_ok = !write_ec;
    pending_head = {};
  }
  if (client_ok && pending_head.size() > 0) {
    auto [ec, n] = co_await asio::async_write(client_, pending_head, kAsTuple);
    client_ok = !ec;
  }
  if (client_ok && upstream_ok && chunked) {
    auto [ec, n] = co_await asio::async_write(client_, asio::buffer("0\r\n\r\n", 5), kAsTuple);
    client_ok = !ec;
  }
  // A client that left cancels the upstream request: closing the connection is what tells an
  // engine to abort the sequence.
  *upstream_reusable = client_ok && upstream_ok && parser.is_done() && response.keep_alive();
  *usage = event_stream ? counter.Usage() : UsageFromBody(body);

  if (first_token != SteadyClock::time_point{}) {
    worker_.stats.Ttft(ids_).Observe(Seconds(first_token - arrived_));
  }
  if (event_stream && counter.content_chunks() > 1) {
    worker_.stats.Tpot(ids_).Observe(Seconds(last_token - first_token) /
                                     static_cast<double>(counter.content_chunks() - 1));
  }
  co_return client_ok&& upstream_ok;
}

asio::awaitable<bool> InferenceCall::Run() {
  CountGuard in_flight(server_.in_flight);
  if (server_.in_flight.load() > server_.config.limits.max_in_flight) {
    co_return co_await Fail(503, "the gateway is at its in-flight request limit", "overloaded");
  }
  std::optional<size_t> tenant;
  if (!server_.config.tenants.empty()) {
    std::string_view authorization = request_[http::field::authorization];
    if (authorization.starts_with("Bearer ")) {
      auto it = server_.tenant_by_key.find(std::string(authorization.substr(7)));
      if (it != server_.tenant_by_key.end()) tenant = it->second;
    }
    if (!tenant) co_return co_await Fail(401, "missing or unknown API key", "invalid_api_key");
    ids_.tenant = *tenant;
  }
  Result<InferenceRequest> parsed = ParseInferenceRequest(request_.body(), kind_);
  if (!parsed) co_return co_await Fail(400, parsed.error().message(), "invalid_request");
  std::uniform_real_distribution<double> draw(0.0, 1.0);
  Result<Route> route = server_.router.Resolve(
      parsed->model, std::string_view(request_["x-strata-version"]), draw(worker_.random));
  if (!route) co_return co_await Fail(404, route.error().message(), "model_not_found");
  const ModelConfig& model = server_.config.models[route->model];
  ids_.model = route->model;
  ids_.version = route->version;

  const int64_t estimate = EstimateTokens(*parsed, kDefaultMaxTokensEstimate);
  if (tenant) {
    std::optional<int64_t> retry_after = co_await Admit(*tenant, estimate);
    if (retry_after) {
      const std::string& tenant_name = server_.config.tenants[*tenant].name;
      server_.stats.quota_rejections_total.With({tenant_name}).Increment();
      co_return co_await Fail(429,
                              fmt::format("tenant \"{}\" is over its token quota", tenant_name),
                              "rate_limit_exceeded", *retry_after);
    }
  }

  const std::vector<size_t>& endpoints =
      server_.registry.VersionEndpoints(route->model, route->version);
  VersionRouting& routing = worker_.routing[route->model][route->version];
  Picker& picker = routing.picker;
  std::vector<std::string> failed;
  TokenUsage usage;
  bool keep_client = false;
  bool answered = false;
  int status = 0;  // the replica's, once one answered
  for (int attempt = 0; attempt <= server_.config.limits.retries && !answered; ++attempt) {
    const TimePoint now = server_.clock.Now();
    PickRequest pick_request;
    pick_request.prompt = parsed->prompt_text;
    pick_request.adapter = route->adapter;
    pick_request.excluded_ids = failed;
    Result<PickResult> pick = picker.Pick(routing.states.Refresh(now), pick_request, now);
    if (!pick) {
      if (attempt > 0) {
        keep_client = co_await Fail(502, "every replica tried failed", "upstream_failed");
      } else {
        keep_client = co_await Fail(503, pick.error().message(), "no_endpoint");
      }
      answered = true;
      break;
    }
    const size_t index = endpoints[pick->index];
    EndpointRuntime& endpoint = server_.registry.endpoint(index);
    worker_.stats.Picks(ids_, pick->reason).Increment();
    CountGuard endpoint_in_flight(endpoint.in_flight);
    const std::string head = UpstreamHead(request_, endpoint.id);

    std::optional<http::response_parser<http::buffer_body>> parser;
    parser.emplace().body_limit(boost::none);
    std::unique_ptr<UpstreamConnection> connection;
    bool sent = false;
    auto& idle = worker_.idle[index];
    if (!idle.empty()) {
      connection = std::move(idle.back());
      idle.pop_back();
      sent = co_await Exchange(*connection, nullptr, head, request_.body(), *parser,
                               server_.config.limits.upstream_timeout);
      // A pooled connection the replica closed meanwhile is not the replica's failure.
      if (!sent) parser.emplace().body_limit(boost::none);
    }
    if (!sent) {
      connection = std::make_unique<UpstreamConnection>(client_.get_executor());
      sent = co_await Exchange(*connection, &server_.resolved[index], head, request_.body(),
                               *parser, server_.config.limits.upstream_timeout);
    }
    if (!sent) {
      server_.stats.upstream_failures_total.With({endpoint.id}).Increment();
      server_.registry.Eject(index, server_.clock.Now(), server_.config.limits.ejection);
      picker.ForgetEndpoint(endpoint.id);
      failed.push_back(endpoint.id);
      if (attempt < server_.config.limits.retries) {
        server_.stats.retries_total.With({model.name}).Increment();
      }
      continue;
    }
    status = parser->get().result_int();
    answered = true;
    bool reusable = false;
    keep_client = co_await Relay(*connection, *parser, &usage, &reusable) && request_.keep_alive();
    if (reusable) idle.push_back(std::move(connection));
    Count(status);
  }
  if (!answered) {
    keep_client = co_await Fail(502, "every replica tried failed", "upstream_failed");
  }

  const int64_t prompt_estimate =
      estimate - (parsed->max_tokens > 0 ? parsed->max_tokens : kDefaultMaxTokensEstimate);
  const int64_t prompt_tokens = usage.reported ? usage.prompt_tokens : prompt_estimate;
  const int64_t used = status == 0 ? 0 : prompt_tokens + usage.completion_tokens;
  if (tenant) server_.ledger.Settle(*tenant, estimate, used, server_.clock.Now());
  if (status != 0) {
    worker_.stats.Tokens(ids_, false).Increment(static_cast<double>(prompt_tokens));
    worker_.stats.Tokens(ids_, true).Increment(static_cast<double>(usage.completion_tokens));
    worker_.stats.E2e(ids_).Observe(Seconds(SteadyClock::now() - arrived_));
  }
  co_return keep_client;
}

// Answers a request that is not an inference call. Returns whether to keep the connection.
asio::awaitable<bool> ServeLocal(GatewayServer::Impl& server, beast::tcp_stream& client,
                                 const http::request<http::string_body>& request) {
  const bool keep = request.keep_alive();
  const std::string_view target = request.target();
  if (request.method() == http::verb::get && target == "/v1/models") {
    co_return co_await Respond(client, 200, server.router.ModelsListBody(), keep);
  }
  if (request.method() == http::verb::get && target == "/healthz") {
    co_return co_await Respond(client, 200, "ok\n", keep, "text/plain");
  }
  co_return co_await RespondError(
      client, 404,
      fmt::format("no route for {} {}", std::string_view(request.method_string()), target),
      "not_found", keep);
}

}  // namespace

asio::awaitable<void> ServeConnection(GatewayServer::Impl& server, Worker& worker,
                                      tcp::socket socket) {
  beast::tcp_stream client(std::move(socket));
  beast::flat_buffer buffer;
  const LimitsConfig& limits = server.config.limits;
  while (!server.stopped.load()) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(
        static_cast<uint32_t>(std::min<size_t>(limits.max_header_bytes, UINT32_MAX)));
    parser.body_limit(limits.max_body_bytes);
    client.expires_after(limits.idle_timeout);
    auto [ec, n] = co_await http::async_read_header(client, buffer, parser, kAsTuple);
    if (!ec) ec = ParseBuffered(parser, buffer);
    if (!ec && !parser.is_done()) {
      client.expires_after(limits.read_timeout);
      std::tie(ec, n) = co_await http::async_read(client, buffer, parser, kAsTuple);
    }
    if (ec) {
      if (ec == http::error::header_limit) {
        co_await RespondError(client, 431, "request header too large", "header_too_large", false);
      } else if (ec == http::error::body_limit) {
        co_await RespondError(client, 413, "request body too large", "body_too_large", false);
      } else if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
                 ec != http::error::end_of_stream && ec != http::error::partial_message) {
        co_await RespondError(client, 400, fmt::format("malformed HTTP request: {}", ec.message()),
                              "bad_request", false);
      }
      break;
    }
    http::request<http::string_body> request = parser.release();
    bool keep = false;
    const std::string_view target = request.target();
    if (request.method() == http::verb::post && target == "/v1/chat/completions") {
      keep =
          co_await InferenceCall(server, worker, client, request, ApiKind::kChatCompletions).Run();
    } else if (request.method() == http::verb::post && target == "/v1/completions") {
      keep = co_await InferenceCall(server, worker, client, request, ApiKind::kCompletions).Run();
    } else if (request.method() == http::verb::get && target == "/metrics") {
      server.stats.in_flight_requests.With().Set(static_cast<double>(server.in_flight.load()));
      keep = co_await Respond(client, 200, server.metrics.RenderText(), request.keep_alive(),
                              "text/plain; version=0.0.4; charset=utf-8");
    } else {
      keep = co_await ServeLocal(server, client, request);
    }
    if (!keep) break;
  }
  beast::error_code ignored;
  client.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

}  // namespace strata::gateway
