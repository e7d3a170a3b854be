#pragma once

// Internal to the gateway module: the event-loop machinery behind GatewayServer, shared by
// server.cc (threads, accept, scraping) and proxy.cc (one client connection). Boost stays in
// here, out of server.h.

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <memory>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gateway/endpoint_registry.h"
#include "gateway/gateway_stats.h"
#include "gateway/loop_stats.h"
#include "gateway/picker.h"
#include "gateway/request.h"
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

// What one event loop routes a model version with: its own picker (prefix history, rotation)
// and its own copy of the version's endpoint states.
struct VersionRouting {
  Picker picker;
  EndpointStatesView states;
};

// One event loop with everything its requests touch: an acceptor on the shared port, the
// routing state per model version, idle upstream connections per replica and its cached metric
// children. Used only from its own thread.
struct Worker {
  Worker(GatewayStats& stats_in, const GatewayConfig& config) : stats(stats_in, config) {}

  // Destroyed explicitly in Stop, before the rest, so that suspended coroutines die while the
  // pools and pickers they reference still exist.
  std::unique_ptr<asio::io_context> io = std::make_unique<asio::io_context>(1);
  std::unique_ptr<tcp::acceptor> acceptor;
  std::vector<std::vector<VersionRouting>> routing;                    // [model][version]
  std::vector<std::vector<std::unique_ptr<UpstreamConnection>>> idle;  // [endpoint]
  std::mt19937_64 random{std::random_device{}()};
  LoopStats stats;
  std::thread thread;
};

struct GatewayServer::Impl {
  Impl(GatewayConfig config_in, const Clock& clock_in);

  GatewayConfig config;
  const Clock& clock;
  ModelRouter router;
  EndpointRegistry registry;
  std::vector<tcp::endpoint> resolved;  // [endpoint]
  std::unordered_map<std::string, size_t> tenant_by_key;
  QuotaLedger ledger;
  telemetry::Registry metrics;
  GatewayStats stats;
  std::atomic<int64_t> in_flight{0};
  std::vector<std::unique_ptr<Worker>> workers;
  uint16_t port = 0;
  std::atomic<bool> stopped{false};
};

// Serves one client connection until it closes, errs or times out (proxy.cc).
asio::awaitable<void> ServeConnection(GatewayServer::Impl& server, Worker& worker,
                                      tcp::socket socket);

}  // namespace strata::gateway
