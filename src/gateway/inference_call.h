#pragma once

// Internal to the gateway module: one OpenAI inference request through the gateway.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/http_exchange.h"
#include "gateway/request.h"
#include "gateway/server_impl.h"
#include "gateway/usage.h"

namespace strata::gateway {

// One inference request on a client connection: authentication, quota admission, routing (and
// holding while its version has no replica), the relay to a replica with retry before the
// first byte reaches the client, and its accounting (metrics, token settlement, the version's
// signals). Lives in its connection's coroutine, on one event loop; not thread-safe.
class InferenceCall {
 public:
  InferenceCall(GatewayServer::Impl& server, Worker& worker, LoopSocket& client,
                const ClientRequest& request, ApiKind kind)
      : server_(server), worker_(worker), client_(client), request_(request), kind_(kind) {}
  InferenceCall(const InferenceCall&) = delete;
  InferenceCall& operator=(const InferenceCall&) = delete;
  // A request cancelled while it waited for its first token (the client left) ends the wait.
  ~InferenceCall() { ReleasePrefill(); }

  // Serves the request; returns whether the client connection may be reused.
  asio::awaitable<bool> Run();

 private:
  // Answers the client with the gateway's own error (OpenAI's shape; `code` and `param` null
  // when empty).
  asio::awaitable<bool> Fail(int status, std::string_view message, std::string_view code,
                             std::optional<int64_t> retry_after = std::nullopt,
                             std::string_view param = {}) {
    Count(status);
    // A refusal by the gateway is an answer, and a late one, for the autoscaler.
    if (status >= 500) MarkAnswered(true);
    co_return co_await RespondError(client_, status, message, code, request_.head.keep_alive,
                                    retry_after, param);
  }
  void Count(int status) { worker_.stats.Requests(ids_, status).Increment(); }
  // Counts the request's outcome in its version's signals, once (see VersionSignals).
  void MarkAnswered(bool late) {
    if (!admitted_ || answered_) return;
    answered_ = true;
    // answered before late: Signals reads them in the other order.
    counts().answered.fetch_add(1);
    if (late) counts().late.fetch_add(1);
  }
  // This loop's copy of the version's counts.
  VersionCounts& counts() { return version_->counts.At(worker_.index); }
  // Records the first token relayed at `at`; returns `at`.
  SteadyClock::time_point FirstToken(SteadyClock::time_point at) {
    MarkAnswered(at - arrived_ > ttft_objective_);
    ReleasePrefill();
    return at;
  }
  // The replica picked has done this request's prefill (its first token came, or the attempt
  // ended without one): tells the picker, so its queue is priced by what is still to do, and
  // closes the request's wait on the replica's busy meter. Once per pick.
  void ReleasePrefill();
  // Brings the worker's routes up to date and returns this request's version's routing there,
  // or null when the version left the table. The pointer is valid until the next co_await.
  VersionRouting* CurrentRouting();
  // The activator: waits for a replica of a version that has none (Run calls it only then, so
  // that most requests make no coroutine frame for it). Returns nullopt when one is there to
  // route to; otherwise the answer (503, or 404 when the version left) has been sent, and
  // returns whether the client connection may be reused.
  asio::awaitable<std::optional<bool>> HoldForReplica();
  // A kept-alive connection to `endpoint` from this loop's pool that the replica has not closed
  // (as far as its events tell), or null.
  std::unique_ptr<UpstreamConnection> TakeIdle(const EndpointRuntime& endpoint);
  // Keeps `connection` for reuse, unless `endpoint` left the routing table.
  void ReturnIdle(const EndpointRuntime& endpoint, std::unique_ptr<UpstreamConnection> connection);
  // Waits for quota, in priority_'s class. Returns the 429 answer's Retry-After seconds when
  // refused.
  asio::awaitable<std::optional<int64_t>> Admit(const TenantEntry& tenant, int64_t tokens);
  // Counts the request under its priority class (once it is in the quota queue, if it waits).
  void CountPriority();
  // Why the gateway answers a request itself, before routing it.
  struct Refusal {
    int status;
    std::string message;
    std::string_view code;  // empty: null
    std::string param;      // the request's parameter at fault; empty: null
  };
  // Authenticates the tenant, parses the body and resolves the route (setting tenant_,
  // parsed_, route_, table_, the version's ids, the token estimate and the priority: the
  // objective's the x-gateway-inference-objective header names, else the tenant's); returns the
  // refusal when one of them fails. Synchronous: what it fills lives in the call, not in a
  // coroutine frame.
  std::optional<Refusal> Prepare();
  // One try on one replica: picks, sends, relays. Returns whether the client connection may be
  // reused once the request is answered (by the replica, or with 503/502 when no replica is
  // left to try), or nullopt when sending to the replica picked failed before anything reached
  // the client, or the replica answered 503 and `attempt` is not the last (it is then ejected
  // and excluded, and the caller may try again).
  asio::awaitable<std::optional<bool>> TryReplica(int attempt);
  // The request's accounting once answered: its outcome in the version's signals, the token
  // settlement with the quota ledger, token and latency metrics.
  void Settle();
  // Relays the answer whose head `upstream` has read to the client; sets the tokens it
  // reports and whether `upstream` may carry another exchange. Returns whether the client is
  // still there.
  asio::awaitable<bool> Relay(UpstreamConnection& upstream, TokenUsage* usage,
                              bool* upstream_reusable);

  GatewayServer::Impl& server_;
  Worker& worker_;
  LoopSocket& client_;
  const ClientRequest& request_;
  ApiKind kind_;
  RequestLabelIds ids_;
  // Set by Prepare: the tenant (null when the gateway has none), in the table kept alive here.
  std::shared_ptr<const TenantTable> tenants_;
  const TenantEntry* tenant_ = nullptr;
  InferenceRequest parsed_;
  Route route_;
  // The route's version's counters; the server keeps every one alive.
  VersionCounters* version_ = nullptr;
  int64_t estimate_ = 0;  // the tokens reserved at admission
  PriorityClass priority_ = PriorityClass::kStandard;
  // Set by the tries.
  std::vector<uint64_t> block_hashes_;  // the prompt's prefix blocks, as the picker hashes them
  std::vector<std::string> failed_;     // replicas tried that failed
  TokenUsage usage_;
  int status_ = 0;  // the replica's, once one answered
  // Times on the request path are the loop's turn times (EventLoop::Now): when epoll said the
  // bytes were there, without a clock read each.
  SteadyClock::time_point arrived_ = worker_.loop.Now();
  // The routing table this request routes with, keeping the replica it picked alive; replaced
  // only between attempts.
  std::shared_ptr<const RoutingTable> table_;
  bool admitted_ = false;  // past authentication, parsing, routing and quota: counted in arrivals
  Duration ttft_objective_{};
  bool answered_ = false;
  // The replica of the current attempt, whose busy meter this request holds open, until
  // ReleasePrefill; kept alive by table_.
  EndpointRuntime* picked_ = nullptr;
  uint64_t pick_ticket_ = 0;  // its pick's ticket (0 for policies that issue none)
};
}  // namespace strata::gateway
