// One inference request through the gateway (see inference_call.h).

#include "gateway/inference_call.h"

#include <fmt/format.h>

#include <array>

#include "gateway/http_exchange.h"

namespace strata::gateway {
namespace {

// The estimate reserved for a request that sets no max_tokens; settled to real usage after.
constexpr int64_t kDefaultMaxTokensEstimate = 256;
constexpr Duration kQuotaPollInterval = std::chrono::milliseconds(10);
// A non-streaming answer is kept (besides being relayed) up to this size to read its usage.
constexpr size_t kMaxUsageBodyBytes = 16 * 1024 * 1024;

double Seconds(SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); }

// Keeps a held request's timer in its worker's list while it waits, so SetRoutes can wake it.
class HeldTimer {
 public:
  HeldTimer(std::vector<asio::steady_timer*>& held, asio::steady_timer& timer)
      : held_(held), timer_(&timer) {
    held_.push_back(timer_);
  }
  ~HeldTimer() { std::erase(held_, timer_); }
  HeldTimer(const HeldTimer&) = delete;
  HeldTimer& operator=(const HeldTimer&) = delete;

 private:
  std::vector<asio::steady_timer*>& held_;
  asio::steady_timer* timer_;
};

// Adds `delta` to a gauge while in scope.
class GaugeGuard {
 public:
  GaugeGuard(telemetry::Gauge& gauge, double delta) : gauge_(gauge), delta_(delta) {
    gauge_.Add(delta_);
  }
  ~GaugeGuard() { gauge_.Add(-delta_); }
  GaugeGuard(const GaugeGuard&) = delete;
  GaugeGuard& operator=(const GaugeGuard&) = delete;

 private:
  telemetry::Gauge& gauge_;
  double delta_;
};

}  // namespace

VersionRouting* InferenceCall::CurrentRouting() {
  SyncRoutes(server_, worker_);
  if (table_ != worker_.table) table_ = worker_.table;
  auto it = worker_.routing.find(counters_->serial);
  return it == worker_.routing.end() ? nullptr : &it->second;
}

void InferenceCall::ReleasePrefill() {
  if (busy_endpoint_ != nullptr) {
    counters_->busy_ticks.fetch_add(busy_endpoint_->busy.Close(server_.clock.Now()).count());
    busy_endpoint_ = nullptr;
  }
  if (pick_ticket_ == 0) return;
  if (auto it = worker_.routing.find(counters_->serial); it != worker_.routing.end()) {
    std::lock_guard lock(it->second.picker->mutex);
    it->second.picker->picker.PrefillDone(picked_endpoint_, pick_ticket_, server_.clock.Now());
  }
  pick_ticket_ = 0;
}

asio::awaitable<std::optional<bool>> InferenceCall::HoldForReplica() {
  const VersionRouting* routing = CurrentRouting();
  if (routing != nullptr && !routing->states.empty()) co_return std::nullopt;
  const LimitsConfig& limits = server_.config.limits;
  enum class Outcome { kReplica, kGone, kTimedOut, kFull };
  Outcome outcome = Outcome::kFull;
  if (routing == nullptr) {
    outcome = Outcome::kGone;
  } else if (server_.held.load() + server_.ledger.Queued() < limits.max_queued) {
    CountGuard held(server_.held);
    CountGuard version_held(counters_->held);
    GaugeGuard gauge(server_.stats.activator_held_requests.With({counters_->model}), 1);
    asio::steady_timer timer(client_.get_executor());
    HeldTimer registration(worker_.held, timer);
    const auto deadline = SteadyClock::now() + limits.activation_timeout;
    while (true) {
      routing = CurrentRouting();
      if (routing == nullptr) {
        outcome = Outcome::kGone;
        break;
      }
      if (!routing->states.empty()) {
        outcome = Outcome::kReplica;
        break;
      }
      if (SteadyClock::now() >= deadline) {
        outcome = Outcome::kTimedOut;
        break;
      }
      // Ends at the deadline, or earlier when SetRoutes cancels it.
      timer.expires_at(deadline);
      co_await timer.async_wait(kAsTuple);
    }
  }
  switch (outcome) {
    case Outcome::kReplica:
      co_return std::nullopt;
    case Outcome::kGone:
      co_return co_await Fail(404,
                              fmt::format("model \"{}\" version \"{}\" is no longer served",
                                          counters_->model, counters_->version),
                              "model_not_found");
    case Outcome::kTimedOut:
      co_return co_await Fail(
          503,
          fmt::format("model \"{}\" has no ready replica after {:g} s", counters_->model,
                      std::chrono::duration<double>(limits.activation_timeout).count()),
          "no_ready_replica");
    case Outcome::kFull:
      break;
  }
  co_return co_await Fail(
      503,
      fmt::format("model \"{}\" has no ready replica and the gateway holds {} requests already",
                  counters_->model, limits.max_queued),
      "overloaded");
}

std::unique_ptr<UpstreamConnection> InferenceCall::TakeIdle(const EndpointRuntime& endpoint) {
  auto it = worker_.idle.find(endpoint.serial);
  if (it == worker_.idle.end() || it->second.empty()) return nullptr;
  std::unique_ptr<UpstreamConnection> connection = std::move(it->second.back());
  it->second.pop_back();
  return connection;
}

void InferenceCall::ReturnIdle(const EndpointRuntime& endpoint,
                               std::unique_ptr<UpstreamConnection> connection) {
  if (endpoint.routed.load(std::memory_order_relaxed)) {
    connection->deadline.ExpiresNever();
    worker_.idle[endpoint.serial].push_back(std::move(connection));
  }
}

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
    if (IsHopByHop(std::string_view(field.name_string()))) continue;
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
      request_.head.keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n");
  // An event stream's header goes out at once (the client waits on it while the engine
  // prefills); any other answer's header leaves with its first body bytes, in one write.
  asio::const_buffer pending_head(head.data(), head.size());
  bool client_ok = true;
  if (event_stream || parser.is_done()) {
    client_ok = !co_await WriteAll(client_, pending_head);
    pending_head = {};
  }

  StreamUsageCounter counter;
  std::string body;
  std::array<char, UpstreamConnection::kRelayBufferBytes>& buffer = upstream.relay_buffer;
  SteadyClock::time_point first_token{}, last_token{};
  bool upstream_ok = true;
  while (client_ok && !parser.is_done()) {
    response.body().data = buffer.data();
    response.body().size = buffer.size();
    beast::error_code ec = ParseBuffered(parser, upstream.buffer);
    if (!ec && response.body().size == buffer.size() && !parser.is_done()) {
      // A clock read, not a timer: the event loop's watchdog enforces it.
      upstream.deadline.ExpiresAfter(server_.config.limits.upstream_timeout);
      std::tie(ec, std::ignore) =
          co_await http::async_read_some(upstream.socket, upstream.buffer, parser, kAsTuple);
      // The upstream timeout bounds the wait for the replica, not a slow client's reading.
      upstream.deadline.ExpiresNever();
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
        if (before == 0) first_token = FirstToken(last_token);
      }
    } else {
      if (first_token == SteadyClock::time_point{}) first_token = FirstToken(SteadyClock::now());
      if (body.size() + got <= kMaxUsageBodyBytes) body.append(piece);
    }
    char size_line[24];
    const auto size_end = fmt::format_to_n(size_line, sizeof(size_line), "{:x}\r\n", got).out;
    const std::array<asio::const_buffer, 4> chunk = {
        pending_head, asio::buffer(size_line, static_cast<size_t>(size_end - size_line)),
        asio::buffer(piece), asio::buffer("\r\n", 2)};
    const std::array<asio::const_buffer, 2> plain = {pending_head, asio::buffer(piece)};
    client_ok = chunked ? !co_await WriteAll(client_, chunk) : !co_await WriteAll(client_, plain);
    pending_head = {};
  }
  if (client_ok && pending_head.size() > 0) {
    client_ok = !co_await WriteAll(client_, pending_head);
  }
  if (client_ok && upstream_ok && chunked) {
    client_ok = !co_await WriteAll(client_, asio::buffer("0\r\n\r\n", 5));
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
    std::string_view authorization = request_.head.Field("authorization");
    if (authorization.starts_with("Bearer ")) {
      auto it = server_.tenant_by_key.find(std::string(authorization.substr(7)));
      if (it != server_.tenant_by_key.end()) tenant = it->second;
    }
    if (!tenant) co_return co_await Fail(401, "missing or unknown API key", "invalid_api_key");
    ids_.tenant = *tenant;
  }
  Result<InferenceRequest> parsed = ParseInferenceRequest(request_.body, kind_);
  if (!parsed) co_return co_await Fail(400, parsed.error().message(), "invalid_request");
  SyncRoutes(server_, worker_);
  table_ = worker_.table;
  std::uniform_real_distribution<double> draw(0.0, 1.0);
  Result<Route> route = table_->router.Resolve(
      parsed->model, request_.head.Field("x-strata-version"), draw(worker_.random));
  if (!route) co_return co_await Fail(404, route.error().message(), "model_not_found");
  ttft_objective_ = table_->models[route->model].ttft_objective;
  VersionCounters* counters = table_->versions[route->model][route->version].counters.get();
  ids_.version = counters;

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
  counters_ = counters;
  counters_->arrivals.fetch_add(1);

  std::vector<std::string> failed;
  TokenUsage usage;
  bool keep_client = false;
  bool answered = false;
  int status = 0;  // the replica's, once one answered
  if (std::optional<bool> refused = co_await HoldForReplica()) {
    keep_client = *refused;
    answered = true;
  }
  for (int attempt = 0; attempt <= server_.config.limits.retries && !answered; ++attempt) {
    VersionRouting* routing = CurrentRouting();
    const TimePoint now = server_.clock.Now();
    PickRequest pick_request;
    pick_request.prompt = parsed->prompt_text;
    pick_request.adapter = route->adapter;
    pick_request.excluded_ids = failed;
    Result<PickResult> pick = Err(UnavailableError(fmt::format(
        "model \"{}\" version \"{}\" is no longer served", counters_->model, counters_->version)));
    if (routing != nullptr) {
      std::span<const EndpointState> states = routing->states.Refresh(now);
      std::lock_guard lock(routing->picker->mutex);
      pick = routing->picker->picker.Pick(states, pick_request, now);
    }
    if (!pick) {
      if (attempt > 0) {
        keep_client = co_await Fail(502, "every replica tried failed", "upstream_failed");
      } else {
        keep_client = co_await Fail(503, pick.error().message(), "no_endpoint");
      }
      answered = true;
      break;
    }
    // Stays alive through table_, which the attempt does not replace.
    EndpointRuntime& endpoint = routing->states.runtime(pick->index);
    picked_endpoint_ = endpoint.id;
    pick_ticket_ = pick->ticket;
    endpoint.busy.Open(now);
    busy_endpoint_ = &endpoint;
    worker_.stats.Picks(ids_, pick->reason).Increment();
    CountGuard endpoint_in_flight(endpoint.in_flight);
    CountGuard version_in_flight(counters_->in_flight);
    const std::string head = UpstreamHead(request_, endpoint.id);

    std::optional<http::response_parser<http::buffer_body>> parser;
    parser.emplace().body_limit(boost::none);
    std::unique_ptr<UpstreamConnection> connection = TakeIdle(endpoint);
    bool sent = false;
    if (connection != nullptr) {
      sent = co_await Exchange(*connection, nullptr, head, request_.body, *parser,
                               server_.config.limits.upstream_timeout);
      // A pooled connection the replica closed meanwhile is not the replica's failure.
      if (!sent) parser.emplace().body_limit(boost::none);
    }
    if (!sent) {
      connection = std::make_unique<UpstreamConnection>(*worker_.io, worker_.deadlines);
      sent = co_await Exchange(*connection, &endpoint.address, head, request_.body, *parser,
                               server_.config.limits.upstream_timeout);
    }
    if (!sent) {
      ReleasePrefill();
      server_.stats.upstream_failures_total.With({endpoint.id}).Increment();
      endpoint.Eject(server_.clock.Now(), server_.config.limits.ejection);
      SyncRoutes(server_, worker_);
      if (auto it = worker_.routing.find(counters_->serial); it != worker_.routing.end()) {
        std::lock_guard lock(it->second.picker->mutex);
        it->second.picker->picker.ForgetEndpoint(endpoint.id);
      }
      failed.push_back(endpoint.id);
      if (attempt < server_.config.limits.retries) {
        server_.stats.retries_total.With({counters_->model}).Increment();
      }
      continue;
    }
    status = parser->get().result_int();
    answered = true;
    bool reusable = false;
    keep_client =
        co_await Relay(*connection, *parser, &usage, &reusable) && request_.head.keep_alive;
    ReleasePrefill();  // an answer without a token (an error, a cut stream) ends it too
    if (reusable) ReturnIdle(endpoint, std::move(connection));
    Count(status);
  }
  if (!answered) {
    keep_client = co_await Fail(502, "every replica tried failed", "upstream_failed");
  }
  MarkAnswered(status == 0 || SteadyClock::now() - arrived_ > ttft_objective_);

  const int64_t prompt_estimate =
      estimate - (parsed->max_tokens > 0 ? parsed->max_tokens : kDefaultMaxTokensEstimate);
  const int64_t prompt_tokens = usage.reported ? usage.prompt_tokens : prompt_estimate;
  const int64_t used = status == 0 ? 0 : prompt_tokens + usage.completion_tokens;
  if (tenant) server_.ledger.Settle(*tenant, estimate, used, server_.clock.Now());
  if (status != 0) {
    if (counters_ != nullptr) counters_->tokens.fetch_add(prompt_tokens + usage.completion_tokens);
    worker_.stats.Tokens(ids_, false).Increment(static_cast<double>(prompt_tokens));
    worker_.stats.Tokens(ids_, true).Increment(static_cast<double>(usage.completion_tokens));
    worker_.stats.E2e(ids_).Observe(Seconds(SteadyClock::now() - arrived_));
  }
  co_return keep_client;
}

}  // namespace strata::gateway
