// One inference request through the gateway (see inference_call.h).

#include "gateway/inference_call.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <span>

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
  HeldTimer(std::vector<LoopTimer*>& held, LoopTimer& timer) : held_(held), timer_(&timer) {
    held_.push_back(timer_);
  }
  ~HeldTimer() { std::erase(held_, timer_); }
  HeldTimer(const HeldTimer&) = delete;
  HeldTimer& operator=(const HeldTimer&) = delete;

 private:
  std::vector<LoopTimer*>& held_;
  LoopTimer* timer_;
};

// Adds `delta` to a gauge while in scope.
class GaugeGuard {
 public:
  GaugeGuard(metrics::Gauge& gauge, double delta) : gauge_(gauge), delta_(delta) {
    gauge_.Add(delta_);
  }
  ~GaugeGuard() { gauge_.Add(-delta_); }
  GaugeGuard(const GaugeGuard&) = delete;
  GaugeGuard& operator=(const GaugeGuard&) = delete;

 private:
  metrics::Gauge& gauge_;
  double delta_;
};

}  // namespace

VersionRouting* InferenceCall::CurrentRouting() {
  SyncRoutes(server_, worker_);
  if (table_ != worker_.table) table_ = worker_.table;
  auto it = worker_.routing.find(version_->serial);
  return it == worker_.routing.end() ? nullptr : &it->second;
}

void InferenceCall::ReleasePrefill() {
  if (picked_ == nullptr) return;
  const TimePoint now = server_.clock.Now();
  counts().busy_ticks.fetch_add(picked_->busy.Close(now).count());
  if (pick_ticket_ != 0) {
    if (auto it = worker_.routing.find(version_->serial); it != worker_.routing.end()) {
      std::lock_guard lock(it->second.picker->mutex);
      it->second.picker->picker.PrefillDone(picked_->id, pick_ticket_, now);
    }
  }
  picked_ = nullptr;
  pick_ticket_ = 0;
}

asio::awaitable<std::optional<bool>> InferenceCall::HoldForReplica() {
  const VersionRouting* routing = CurrentRouting();
  const LimitsConfig& limits = server_.config.limits;
  enum class Outcome { kReplica, kGone, kTimedOut, kFull };
  Outcome outcome = Outcome::kFull;
  if (routing == nullptr) {
    outcome = Outcome::kGone;
  } else if (server_.held.load() + server_.ledger.Queued() < limits.max_queued) {
    CountGuard held(server_.held);
    CountGuard version_held(counts().held);
    GaugeGuard gauge(server_.stats.activator_held_requests.With({version_->model}), 1);
    LoopTimer timer(worker_.loop);
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
      co_await timer.WaitUntil(deadline);
    }
  }
  switch (outcome) {
    case Outcome::kReplica:
      co_return std::nullopt;
    case Outcome::kGone:
      co_return co_await Fail(404,
                              fmt::format("model \"{}\" version \"{}\" is no longer served",
                                          version_->model, version_->version),
                              "model_not_found");
    case Outcome::kTimedOut:
      co_return co_await Fail(
          503,
          fmt::format("model \"{}\" has no ready replica after {:g} s", version_->model,
                      std::chrono::duration<double>(limits.activation_timeout).count()),
          "no_ready_replica");
    case Outcome::kFull:
      break;
  }
  co_return co_await Fail(
      503,
      fmt::format("model \"{}\" has no ready replica and the gateway holds {} requests already",
                  version_->model, limits.max_queued),
      "overloaded");
}

std::unique_ptr<UpstreamConnection> InferenceCall::TakeIdle(const EndpointRuntime& endpoint) {
  auto it = worker_.idle.find(endpoint.serial);
  if (it == worker_.idle.end()) return nullptr;
  while (!it->second.empty()) {
    std::unique_ptr<UpstreamConnection> connection = std::move(it->second.back());
    it->second.pop_back();
    // One the replica closed while it was idle is dropped here, not found out by a failed
    // exchange.
    if (!connection->socket.hung_up()) return connection;
  }
  return nullptr;
}

void InferenceCall::ReturnIdle(const EndpointRuntime& endpoint,
                               std::unique_ptr<UpstreamConnection> connection) {
  if (endpoint.routed.load(std::memory_order_relaxed)) {
    connection->deadline.ExpiresNever();
    worker_.idle[endpoint.serial].push_back(std::move(connection));
  }
}

asio::awaitable<std::optional<int64_t>> InferenceCall::Admit(const TenantEntry& tenant,
                                                             int64_t tokens) {
  QuotaDecision decision =
      server_.ledger.Request(tenant.id, tokens, priority_, server_.clock.Now());
  CountPriority();
  const auto queued_at = SteadyClock::now();
  const auto deadline = queued_at + server_.config.limits.max_queue_wait;
  LoopTimer timer(worker_.loop);
  while (decision.kind == QuotaDecision::Kind::kQueued) {
    if (SteadyClock::now() >= deadline) {
      const Duration retry = server_.ledger.Abandon(decision.ticket, server_.clock.Now());
      decision.kind = QuotaDecision::Kind::kRejected;
      decision.retry_after = retry;
      break;
    }
    co_await timer.WaitFor(kQuotaPollInterval);
    decision = server_.ledger.Poll(decision.ticket, server_.clock.Now());
  }
  worker_.stats.QueueSeconds(ids_).Observe(Seconds(SteadyClock::now() - queued_at));
  if (decision.kind == QuotaDecision::Kind::kAdmitted) co_return std::nullopt;
  co_return std::chrono::duration_cast<std::chrono::seconds>(decision.retry_after).count();
}

void InferenceCall::CountPriority() { worker_.stats.Priorities(ids_, priority_).Increment(); }

asio::awaitable<bool> InferenceCall::Relay(UpstreamConnection& upstream, TokenUsage* usage,
                                           bool* upstream_reusable) {
  const net::ResponseHead& response = upstream.response;
  const bool event_stream = response.Field("content-type").starts_with("text/event-stream");
  // A body the replica frames by chunks or by closing goes to the client in chunks.
  const bool chunked = response.framing == net::BodyFraming::kChunked ||
                       response.framing == net::BodyFraming::kUntilClose;
  HeadWriter head(upstream.head);
  head << "HTTP/1.1 " << response.status << " " << response.reason << "\r\n";
  for (const auto& [name, value] : response.fields) {
    if (IsHopByHop(name)) continue;
    head << name << ": " << value << "\r\n";
  }
  if (chunked) {
    head << "Transfer-Encoding: chunked\r\n";
  } else if (response.framing == net::BodyFraming::kLength) {
    head << "Content-Length: " << *response.content_length << "\r\n";
  }
  head << (request_.head.keep_alive ? "Connection: keep-alive\r\n\r\n"
                                    : "Connection: close\r\n\r\n");
  net::ResponseBodyReader reader(response, server_.config.limits.max_header_bytes);
  const bool keep_alive = response.keep_alive;
  upstream.buffer.consume(response.size);  // the head's views are not used after this
  // An event stream's header goes out at once (the client waits on it while the engine
  // prefills); any other answer's header leaves with its first body bytes, in one write.
  asio::const_buffer pending_head = asio::buffer(upstream.head);
  bool client_ok = true;
  if (event_stream || reader.done()) {
    client_ok = !co_await client_.WriteAll(pending_head);
    pending_head = {};
  }

  StreamUsageCounter counter;
  std::string body;                     // a non-streamed answer in pieces, to read its usage
  std::optional<TokenUsage> one_piece;  // or its usage, read in place when it came whole
  SteadyClock::time_point first_token{}, last_token{};
  bool upstream_ok = true;
  size_t offset = 0;  // bytes of the body's framing read so far, for error messages
  UpstreamConnection::Gather& gather = upstream.gather;
  bool ended_by_close = false;
  while (client_ok && upstream_ok && !reader.done()) {
    // Everything the buffer holds goes to the client in one write: a read that brought several
    // chunks of a stream costs one write, as a plain proxy's would.
    const std::string_view input = Contents(upstream.buffer);
    size_t used = 0;
    size_t pieces = 0;
    size_t count = 0;  // buffers gathered
    gather.buffers[count++] = pending_head;
    while (pieces < UpstreamConnection::Gather::kMaxPieces && !reader.done()) {
      auto step = reader.Next(input.substr(used), offset + used);
      if (!step) {
        upstream_ok = false;
        break;
      }
      if (step->consumed == 0) break;
      used += step->consumed;
      // A view into the upstream buffer, consumed once it has been written.
      const std::string_view piece = step->data;
      if (piece.empty()) continue;
      if (event_stream) {
        const int64_t before = counter.content_chunks();
        counter.Feed(piece);
        if (counter.content_chunks() > before) {
          last_token = worker_.loop.Now();
          if (before == 0) first_token = FirstToken(last_token);
        }
      } else {
        if (first_token == SteadyClock::time_point{}) first_token = FirstToken(worker_.loop.Now());
        if (body.empty() && reader.done()) {
          one_piece = UsageFromBody(piece);
        } else if (body.size() + piece.size() <= kMaxUsageBodyBytes) {
          body.append(piece);
        }
      }
      if (chunked) {
        char* size_line = gather.size_lines[pieces].data();
        char* size_end = std::to_chars(size_line, size_line + 16, piece.size(), 16).ptr;
        *size_end++ = '\r';
        *size_end++ = '\n';
        gather.buffers[count++] =
            asio::buffer(size_line, static_cast<size_t>(size_end - size_line));
        gather.buffers[count++] = asio::buffer(piece);
        gather.buffers[count++] = asio::buffer("\r\n", 2);
      } else {
        gather.buffers[count++] = asio::buffer(piece);
      }
      ++pieces;
    }
    if (!upstream_ok) break;
    // The last chunk leaves with the last data.
    if (chunked && reader.done()) gather.buffers[count++] = asio::buffer("0\r\n\r\n", 5);
    if (count > 1 || reader.done()) {
      client_ok = !co_await client_.WriteAll(std::span(gather.buffers.data(), count));
      pending_head = {};
    }
    offset += used;
    upstream.buffer.consume(used);
    if (used > 0 || reader.done()) continue;
    // A clock read, not a timer: the event loop's watchdog enforces it.
    upstream.deadline.ExpiresAfter(server_.config.limits.upstream_timeout);
    auto [ec, n] =
        co_await upstream.socket.ReadSome(upstream.buffer.prepare(UpstreamConnection::kReadBytes));
    // The upstream timeout bounds the wait for the replica, not a slow client's reading.
    upstream.deadline.ExpiresNever();
    upstream.buffer.commit(n);
    if (ec == asio::error::eof && reader.EndOfInput()) {
      ended_by_close = true;
      break;
    }
    if (ec) upstream_ok = false;
  }
  // A head still waiting (an empty or broken body), and the last chunk of a body the replica
  // ended by closing.
  const bool last_chunk = ended_by_close && chunked && upstream_ok;
  if (client_ok && (pending_head.size() > 0 || last_chunk)) {
    const std::array<asio::const_buffer, 2> tail = {
        pending_head, last_chunk ? asio::buffer("0\r\n\r\n", 5) : asio::const_buffer()};
    client_ok = !co_await client_.WriteAll(tail);
  }
  // A client that left cancels the upstream request: closing the connection is what tells an
  // engine to abort the sequence. Bytes beyond the answer would be read as the next exchange's:
  // such a connection is not reused either.
  *upstream_reusable =
      client_ok && upstream_ok && reader.done() && keep_alive && upstream.buffer.size() == 0;
  *usage = event_stream ? counter.Usage() : one_piece ? *one_piece : UsageFromBody(body);

  if (first_token != SteadyClock::time_point{}) {
    worker_.stats.Ttft(ids_).Observe(Seconds(first_token - arrived_));
  }
  if (event_stream && counter.content_chunks() > 1) {
    worker_.stats.Tpot(ids_).Observe(Seconds(last_token - first_token) /
                                     static_cast<double>(counter.content_chunks() - 1));
  }
  co_return client_ok&& upstream_ok;
}

std::optional<InferenceCall::Refusal> InferenceCall::Prepare() {
  if (SyncTenants(server_, worker_).authenticates()) {
    tenants_ = worker_.tenants;
    tenant_ = tenants_->Find(request_.head.Field("authorization"));
    if (tenant_ == nullptr)
      return Refusal{401, "missing or unknown API key", "invalid_api_key", {}};
    ids_.tenant = tenant_;
  }
  Result<InferenceRequest> parsed = ParseInferenceRequest(request_.body, kind_);
  if (!parsed) {
    return Refusal{400, parsed.error().message(), {}, std::string(ParseErrorParam(parsed.error()))};
  }
  parsed_ = std::move(*parsed);
  SyncRoutes(server_, worker_);
  table_ = worker_.table;
  std::uniform_real_distribution<double> draw(0.0, 1.0);
  Result<Route> route = table_->router.Resolve(
      parsed_.model, request_.head.Field("x-strata-version"), draw(worker_.random));
  if (!route) return Refusal{404, route.error().message(), "model_not_found", {}};
  route_ = std::move(*route);
  const ModelConfig& model = table_->models[route_.model];
  if (!model.tenants.empty() &&
      (tenant_ == nullptr || std::find(model.tenants.begin(), model.tenants.end(), tenant_->name) ==
                                 model.tenants.end())) {
    return Refusal{
        403,
        tenant_ == nullptr
            ? fmt::format("model \"{}\" is served to named tenants only", model.name)
            : fmt::format("tenant \"{}\" may not call model \"{}\"", tenant_->name, model.name),
        "model_not_permitted", "model"};
  }
  if (tenant_ != nullptr) priority_ = tenant_->priority;
  if (auto objective = model.objectives.find(request_.head.Field("x-gateway-inference-objective"));
      objective != model.objectives.end()) {
    priority_ = objective->second;
  }
  ttft_objective_ = model.ttft_objective;
  version_ = table_->versions[route_.model][route_.version].counters.get();
  ids_.version = version_;
  estimate_ = EstimateTokens(parsed_, kDefaultMaxTokensEstimate);
  return std::nullopt;
}

namespace {

// Whether a replica other than `id` and those in `failed` may take a request now.
bool AnotherCandidate(std::span<const EndpointState> states, std::string_view id,
                      const std::vector<std::string>& failed) {
  return std::any_of(states.begin(), states.end(), [&](const EndpointState& state) {
    return state.id != id && state.ready && !state.draining && state.healthy &&
           std::find(failed.begin(), failed.end(), state.id) == failed.end();
  });
}

}  // namespace

asio::awaitable<std::optional<bool>> InferenceCall::TryReplica(int attempt) {
  VersionRouting* routing = CurrentRouting();
  const TimePoint now = server_.clock.Now();
  // Hashed once per request, before the lock the loops share the picker under.
  if (routing != nullptr && attempt == 0) {
    block_hashes_ = routing->picker->picker.BlockHashes(parsed_.prompt_text);
  }
  PickRequest pick_request;
  pick_request.prompt = parsed_.prompt_text;
  pick_request.block_hashes = block_hashes_;
  pick_request.adapter = route_.adapter;
  pick_request.excluded_ids = failed_;
  Result<PickResult> pick = [&]() -> Result<PickResult> {
    if (routing == nullptr) {
      return Err(UnavailableError(fmt::format("model \"{}\" version \"{}\" is no longer served",
                                              version_->model, version_->version)));
    }
    std::span<const EndpointState> states = routing->states.Refresh(now);
    std::lock_guard lock(routing->picker->mutex);
    return routing->picker->picker.Pick(states, pick_request, now);
  }();
  if (!pick) {
    if (attempt > 0) co_return co_await Fail(502, "every replica tried failed", "upstream_failed");
    co_return co_await Fail(503, pick.error().message(), "no_endpoint");
  }
  // Stays alive through table_, which the attempt does not replace.
  EndpointRuntime& endpoint = routing->states.runtime(pick->index);
  picked_ = &endpoint;
  pick_ticket_ = pick->ticket;
  endpoint.busy.Open(now);
  worker_.stats.Picks(ids_, pick->reason).Increment();
  CountGuard endpoint_in_flight(endpoint.in_flight);
  CountGuard version_in_flight(counts().in_flight);
  const LimitsConfig& limits = server_.config.limits;
  std::unique_ptr<UpstreamConnection> connection = TakeIdle(endpoint);
  // A pooled connection the replica closed meanwhile is not the replica's failure.
  bool sent =
      connection != nullptr && co_await Exchange(*connection, nullptr, request_, endpoint.id,
                                                 limits.max_header_bytes, limits.upstream_timeout);
  if (!sent) {
    connection = std::make_unique<UpstreamConnection>(worker_.loop, worker_.deadlines);
    sent = co_await Exchange(*connection, &endpoint.address, request_, endpoint.id,
                             limits.max_header_bytes, limits.upstream_timeout);
  }
  if (!sent) {
    ReleasePrefill();
    server_.stats.upstream_failures_total.With({endpoint.id}).Increment();
    endpoint.Eject(server_.clock.Now(), limits.ejection);
    SyncRoutes(server_, worker_);
    if (auto it = worker_.routing.find(version_->serial); it != worker_.routing.end()) {
      std::lock_guard lock(it->second.picker->mutex);
      it->second.picker->picker.ForgetEndpoint(endpoint.id);
    }
    failed_.push_back(endpoint.id);
    if (attempt < limits.retries) server_.stats.retries_total.With({version_->model}).Increment();
    co_return std::nullopt;
  }
  if (connection->response.status == 503 && attempt < limits.retries &&
      AnotherCandidate(routing->states.Refresh(server_.clock.Now()), endpoint.id, failed_)) {
    // A replica that is shutting down or still starting (llm-d-inference-sim, strata engine-sim)
    // answers 503 before doing any work, where vLLM's server stops accepting and the connect
    // above fails: either way another replica may serve the request. The last try relays the
    // 503 as it is. The connection goes with its unread body.
    ReleasePrefill();
    endpoint.Eject(server_.clock.Now(), limits.ejection);
    failed_.push_back(endpoint.id);
    server_.stats.retries_total.With({version_->model}).Increment();
    co_return std::nullopt;
  }
  status_ = connection->response.status;
  bool reusable = false;
  const bool keep_client =
      co_await Relay(*connection, &usage_, &reusable) && request_.head.keep_alive;
  ReleasePrefill();  // an answer without a token (an error, a cut stream) ends it too
  if (reusable) ReturnIdle(endpoint, std::move(connection));
  Count(status_);
  co_return keep_client;
}

void InferenceCall::Settle() {
  const SteadyClock::duration elapsed = worker_.loop.Now() - arrived_;
  MarkAnswered(status_ == 0 || elapsed > ttft_objective_);
  const int64_t prompt_estimate =
      estimate_ - (parsed_.max_tokens > 0 ? parsed_.max_tokens : kDefaultMaxTokensEstimate);
  const int64_t prompt_tokens = usage_.reported ? usage_.prompt_tokens : prompt_estimate;
  const int64_t used = status_ == 0 ? 0 : prompt_tokens + usage_.completion_tokens;
  if (tenant_ != nullptr) server_.ledger.Settle(tenant_->id, estimate_, used, server_.clock.Now());
  if (status_ != 0) {
    if (admitted_) counts().tokens.fetch_add(prompt_tokens + usage_.completion_tokens);
    worker_.stats.Tokens(ids_, false).Increment(static_cast<double>(prompt_tokens));
    worker_.stats.Tokens(ids_, true).Increment(static_cast<double>(usage_.completion_tokens));
    worker_.stats.E2e(ids_).Observe(Seconds(elapsed));
  }
}

asio::awaitable<bool> InferenceCall::Run() {
  CountGuard in_flight(server_.in_flight);
  if (server_.in_flight.load() > server_.config.limits.max_in_flight) {
    co_return co_await Fail(503, "the gateway is at its in-flight request limit", "overloaded");
  }
  if (std::optional<Refusal> refusal = Prepare()) {
    co_return co_await Fail(refusal->status, refusal->message, refusal->code, std::nullopt,
                            refusal->param);
  }
  if (tenant_ == nullptr) CountPriority();
  if (tenant_ != nullptr) {
    std::optional<int64_t> retry_after = co_await Admit(*tenant_, estimate_);
    if (retry_after) {
      const std::string& tenant_name = tenant_->name;
      server_.stats.quota_rejections_total.With({tenant_name}).Increment();
      co_return co_await Fail(429,
                              fmt::format("tenant \"{}\" is over its token quota", tenant_name),
                              "rate_limit_exceeded", *retry_after);
    }
  }
  admitted_ = true;
  counts().arrivals.fetch_add(1);

  // Most requests find a replica at once: no coroutine frame for the wait.
  const VersionRouting* routing = CurrentRouting();
  std::optional<bool> keep_client;
  if (routing == nullptr || routing->states.empty()) keep_client = co_await HoldForReplica();
  for (int attempt = 0; attempt <= server_.config.limits.retries && !keep_client; ++attempt) {
    keep_client = co_await TryReplica(attempt);
  }
  if (!keep_client)
    keep_client = co_await Fail(502, "every replica tried failed", "upstream_failed");
  Settle();
  co_return *keep_client;
}

}  // namespace strata::gateway
