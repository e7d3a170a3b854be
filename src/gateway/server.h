#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "gateway/config.h"

namespace strata::gateway {

// The OpenAI-compatible gateway: accepts HTTP/1.1 on one port with one event loop per thread
// (each with its own SO_REUSEPORT acceptor, picker and upstream connection pools; the request
// path locks only the quota ledger of limited tenants and the metric families' child lookup),
// routes POST /v1/chat/completions and /v1/completions to engine replicas, answers
// GET /v1/models, /metrics and /healthz, and scrapes every replica's /metrics every
// `scrape_interval`.
//
// Owned by whoever started it (the `strata gateway` command, a test). Thread-safe: Stop may be
// called from any thread.
class GatewayServer {
 public:
  // Binds `host:port` (port 0 picks a free one, see port()) and starts the event loops.
  // `clock` (quota buckets, picker staleness, ejection) must outlive the server. Returns
  // kUnavailable when the address cannot be bound.
  static Result<std::unique_ptr<GatewayServer>> Start(GatewayConfig config, const std::string& host,
                                                      uint16_t port, const Clock& clock);
  ~GatewayServer();  // Stops.

  uint16_t port() const;

  // Stops accepting, drops open connections and joins the event-loop threads. Idempotent.
  void Stop();

  // The /metrics page.
  std::string MetricsText() const;

  struct Impl;

 private:
  explicit GatewayServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::gateway
