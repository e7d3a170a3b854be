#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "gateway/config.h"

namespace strata::gateway {

// What the gateway saw of one replica, for the autoscaler. Plain data.
struct EndpointSignals {
  std::string id;          // "host:port"
  int64_t in_flight = 0;   // requests the gateway sent it that have not finished
  bool reachable = false;  // answered its last scrape (false before the first)
  // From the last successful scrape (zeros before one; see scraped_at).
  int64_t waiting = 0;
  int64_t running = 0;
  double kv_usage = 0.0;
  double prefix_cache_queries = 0;  // the engine's counters (EngineMetrics)
  double prefix_cache_hits = 0;
  TimePoint scraped_at{};  // TimePoint{} when never scraped
};

// The gateway's own figures for one model version, for the autoscaler (autoscaler::LoadSample).
// The *_total fields are counters since the gateway started, never decreasing. Plain data.
struct VersionSignals {
  std::string model;
  std::string version;
  // Requests admitted for this version (past parsing, routing and the tenant's quota).
  int64_t arrivals_total = 0;
  // Arrivals whose outcome is known: first token (first body byte when not streaming) relayed,
  // refused by the gateway (5xx), or ended otherwise (the client left, the engine sent nothing).
  int64_t answered_total = 0;
  // Of those, the ones whose first token came after the model's TTFT objective or never came.
  int64_t late_total = 0;
  int64_t in_flight = 0;  // sent to a replica, not finished
  int64_t held = 0;       // waiting for a replica (the activator)
  // Prompt + completion tokens of the requests answered (the engine's usage, else the
  // gateway's estimate of the prompt), for cost per million tokens.
  int64_t tokens_total = 0;
  // Replica-seconds during which a replica of this version had a request waiting for its first
  // token (autoscaler::LoadSample::prefill_busy_seconds_total): a counter, spells in progress
  // included.
  double prefill_busy_seconds_total = 0;
  std::vector<EndpointSignals> endpoints;  // the version's replicas in the routing table
};

// The OpenAI-compatible gateway: accepts HTTP/1.1 on one port with one event loop per thread
// (each with its own SO_REUSEPORT acceptor and upstream connection pools; one picker per model
// version is shared by the loops, so every pick sees the whole routing history; the request
// path locks that picker for a pick and a first token, each replica's busy meter, the quota
// ledger of limited tenants and the metric families' child lookup),
// routes POST /v1/chat/completions and /v1/completions to engine replicas, answers
// GET /v1/models, /metrics and /healthz, and scrapes every replica's /metrics every
// `scrape_interval`.
//
// The routes (models, versions, replicas) start as the configuration's and change at run time
// with SetRoutes: the control plane feeds it the ready replicas of each service. So do the
// tenants, with SetTenants: the control plane feeds it its Tenant objects. A version with
// no replica holds its requests until one comes (the activator), bounded by
// limits.activation_timeout.
//
// Owned by whoever started it (the `strata gateway` command, the control plane, a test).
// Thread-safe: every method may be called from any thread.
class GatewayServer {
 public:
  // Binds `host:port` (port 0 picks a free one, see port()) and starts the event loops.
  // `clock` (quota buckets, picker staleness, ejection) must outlive the server. Returns
  // kInvalidArgument when config.models is invalid (ValidateModels; a version may have no
  // endpoint), config.tenants is (ValidateTenants) or a replica's host does not resolve,
  // kUnavailable when the address cannot be bound, naming it (another gateway listening there
  // included: only the server's own loops share the port).
  static Result<std::unique_ptr<GatewayServer>> Start(GatewayConfig config, const std::string& host,
                                                      uint16_t port, const Clock& clock);
  ~GatewayServer();  // Stops.

  uint16_t port() const;

  // Stops accepting, drops open connections and joins the event-loop threads. Idempotent.
  void Stop();

  // Replaces the served models, their versions and replicas, atomically: each request routes
  // with either the old table or the new one, never a mix. A replica kept (same "host:port")
  // keeps its in-flight count, last scrape and ejection; a replica added is scraped from now
  // on; a replica removed gets no new request from the next one on, while the requests and
  // streams it is serving run to their end untouched (this is how a draining replica finishes).
  // Requests held for a version with no replica are woken to route to the new ones. A table
  // equal to the current one changes nothing (pickers keep their history either way).
  //
  // Returns kInvalidArgument naming the field ("models[0].versions[1].endpoints[0]: ...") when
  // `models` is invalid (ValidateModels) or a new replica's host does not resolve, and then
  // changes nothing; kUnavailable after Stop.
  Status SetRoutes(std::vector<ModelConfig> models);

  // Replaces the tenants (who each bearer key belongs to, each one's token quota and priority
  // class), atomically: each request authenticates with either the old set or the new one. A
  // tenant kept (same name) keeps its quota bucket: the tokens it holds, capped at a smaller
  // quota, its debt and its queued requests; a tenant added starts with a full bucket; a tenant
  // removed has its keys refused (401) from the next request on, while its requests already
  // admitted or queued go on without a quota. With no tenant, no key is asked for.
  //
  // Returns kInvalidArgument naming the field ("tenants[1].keys[0]: key used twice") when
  // `tenants` is invalid (ValidateTenants), and then changes nothing; kUnavailable after Stop.
  Status SetTenants(std::vector<TenantConfig> tenants);

  // The gateway's figures for each model version in the current routing table, in table order.
  // Cheap (atomic loads, and each replica's busy meter locked for a moment).
  std::vector<VersionSignals> Signals() const;

  // Requests the gateway has sent to the replica `endpoint` ("host:port") that have not
  // finished, whether or not the replica is still in the routing table (0 for one it never
  // knew). A replica that SetRoutes removed gets no new request, so it may be stopped once
  // this reaches 0: its streams have finished.
  int64_t InFlight(const std::string& endpoint) const;

  // The /metrics page.
  std::string MetricsText() const;

  struct Impl;

 private:
  explicit GatewayServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::gateway
