#pragma once

// Internal to the gateway module: the event-loop machinery behind GatewayServer, shared by
// server.cc (threads, accept, scraping) and proxy.cc (one client connection). Boost stays in
// here, out of server.h.

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gateway/endpoint_registry.h"
#include "gateway/gateway_stats.h"
#include "gateway/loop_stats.h"
#include "gateway/picker.h"
#include "gateway/request.h"
#include "gateway/routing_table.h"
#include "gateway/server.h"
#include "gateway/token_quota.h"
#include "telemetry/metrics.h"

namespace strata::gateway {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

inline constexpr auto kAsTuple = asio::as_tuple(asio::use_awaitable);

// A kept-alive connection to one replica.
struct UpstreamConnection {
  explicit UpstreamConnection(asio::any_io_executor executor) : stream(std::move(executor)) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
};

// What one event loop routes a model version with: its own picker (prefix history, rotation),
// kept while the version stays in the routing table, and its own copy of the version's
// endpoint states, rebuilt with each new table.
struct VersionRouting {
  explicit VersionRouting(const PickerOptions& options) : picker(options) {}
  Picker picker;
  EndpointStatesView states;
};

// One event loop with everything its requests touch: an acceptor on the shared port, the
// routing table it routes with and the routing state per model version, idle upstream
// connections per replica, the requests waiting for a replica, and its cached metric children.
// Used only from its own thread.
struct Worker {
  Worker(GatewayStats& stats_in, const GatewayConfig& config) : stats(stats_in, config) {}

  // Destroyed explicitly in Stop, before the rest, so that suspended coroutines die while the
  // pools and pickers they reference still exist.
  std::unique_ptr<asio::io_context> io = std::make_unique<asio::io_context>(1);
  std::unique_ptr<tcp::acceptor> acceptor;
  std::shared_ptr<const RoutingTable> table;
  std::unordered_map<uint64_t, VersionRouting> routing;  // by VersionCounters::serial
  // Kept-alive connections by EndpointRuntime::serial, of routed replicas only.
  std::unordered_map<uint64_t, std::vector<std::unique_ptr<UpstreamConnection>>> idle;
  // Timers of the requests held for a replica: cancelled (waking them) when the routes change.
  std::vector<asio::steady_timer*> held;
  std::mt19937_64 random{std::random_device{}()};
  LoopStats stats;
  std::thread thread;
};

struct GatewayServer::Impl {
  Impl(GatewayConfig config_in, const Clock& clock_in);

  GatewayConfig config;  // its models moved into the first routing table
  const Clock& clock;
  std::unordered_map<std::string, size_t> tenant_by_key;
  QuotaLedger ledger;
  telemetry::Registry metrics;
  GatewayStats stats;
  std::atomic<int64_t> in_flight{0};
  std::atomic<int64_t> held{0};  // requests waiting for a replica, all models
  std::vector<std::unique_ptr<Worker>> workers;
  uint16_t port = 0;
  std::atomic<bool> stopped{false};

  // Serialises SetRoutes and Stop. Never taken on the request path.
  std::mutex routes_mutex;
  RoutingTableBuilder builder;  // guarded by routes_mutex
  // The table requests route with; a worker reloads it when `generation` differs from its own.
  std::atomic<std::shared_ptr<const RoutingTable>> table;
  std::atomic<uint64_t> generation{0};
};

// Brings `worker`'s routing table and per-version routing state up to date with the server's:
// one atomic load when nothing changed. Runs on the worker's thread.
void SyncRoutes(GatewayServer::Impl& server, Worker& worker);

// The /metrics page, with the gauges read at render time brought up to date.
std::string RenderMetrics(GatewayServer::Impl& server);

// Serves one client connection until it closes, errs or times out (proxy.cc).
asio::awaitable<void> ServeConnection(GatewayServer::Impl& server, Worker& worker,
                                      tcp::socket socket);

}  // namespace strata::gateway
