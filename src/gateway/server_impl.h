#pragma once

// Internal to the gateway module: the event-loop machinery behind GatewayServer, shared by
// server.cc (threads, accept, scraping) and proxy.cc (one client connection). Boost stays in
// here, out of server.h.

#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gateway/endpoint_registry.h"
#include "gateway/event_loop.h"
#include "gateway/gateway_stats.h"
#include "gateway/loop_socket.h"
#include "gateway/loop_stats.h"
#include "gateway/picker.h"
#include "gateway/request.h"
#include "gateway/routing_table.h"
#include "gateway/server.h"
#include "gateway/tenant_table.h"
#include "gateway/token_quota.h"
#include "metrics/metrics.h"
#include "net/http_response_parser.h"

namespace strata::gateway {

namespace beast = boost::beast;
namespace http = beast::http;

// How often each event loop's watchdog looks for sockets past their deadline: a deadline is
// enforced within this much of its time.
inline constexpr Duration kDeadlineSweepInterval = std::chrono::milliseconds(100);

// The deadline of a socket's current wait (a client's next request, an upstream answer),
// enforced by its event loop's watchdog. Past it, the socket is closed, which ends its pending
// operation with an error; or, for a request being received (OnExpiry::kEndRead), only the wait
// for its bytes ends, the socket staying open for the 408 answer. Setting a deadline reads the
// time the loop's turn began: no clock read, and no timer armed or cancelled per socket
// operation. Registers itself in `registry` (its event loop's) for its lifetime. Used only on its
// event loop's thread.
class SocketDeadline {
 public:
  enum class OnExpiry {
    kClose,    // close the socket
    kEndRead,  // end a pending read with operation_aborted; close when no read is pending
  };

  SocketDeadline(std::unordered_set<SocketDeadline*>& registry, LoopSocket& socket)
      : registry_(registry), socket_(socket) {
    registry_.insert(this);
  }
  ~SocketDeadline() { registry_.erase(this); }
  SocketDeadline(const SocketDeadline&) = delete;
  SocketDeadline& operator=(const SocketDeadline&) = delete;

  void ExpiresAfter(Duration timeout, OnExpiry action = OnExpiry::kClose) {
    at_ = socket_.loop().Now() + std::chrono::duration_cast<SteadyClock::duration>(timeout);
    action_ = action;
    expired_ = false;
  }
  void ExpiresNever() {
    at_ = SteadyClock::time_point::max();
    expired_ = false;
  }
  // Whether the deadline last set has passed.
  bool expired() const { return expired_; }

  // Acts when the deadline is before `now` (the watchdog's sweep).
  void ExpireIfPast(SteadyClock::time_point now) {
    if (at_ >= now) return;
    at_ = SteadyClock::time_point::max();
    expired_ = true;
    if (action_ == OnExpiry::kEndRead && socket_.EndRead()) return;
    socket_.Close();
  }

 private:
  std::unordered_set<SocketDeadline*>& registry_;
  LoopSocket& socket_;
  SteadyClock::time_point at_ = SteadyClock::time_point::max();
  OnExpiry action_ = OnExpiry::kClose;
  bool expired_ = false;
};

// A kept-alive connection to one replica, with the buffers of its exchanges (kept with it, so
// that a request allocates none of them).
struct UpstreamConnection {
  UpstreamConnection(EventLoop& loop, std::unordered_set<SocketDeadline*>& deadlines)
      : socket(loop), deadline(deadlines, socket) {
    buffer.reserve(kReadBytes);
  }
  // Bytes asked of the socket per read.
  static constexpr size_t kReadBytes = 16 * 1024;

  LoopSocket socket;
  SocketDeadline deadline;
  std::string head;           // the head being sent to the replica, then the client's
  beast::flat_buffer buffer;  // bytes read from the replica, not yet relayed
  // The current answer's head: views into `buffer`, valid until the relay consumes them.
  net::ResponseHead response;
  // What one write to the client gathers: the pieces of body the buffer holds, each with its
  // chunk framing.
  struct Gather {
    static constexpr size_t kMaxPieces = 16;
    // The answer's head, then per piece a size line, the data and CRLF, then the last chunk.
    std::array<asio::const_buffer, 2 + 3 * kMaxPieces> buffers;
    std::array<std::array<char, 24>, kMaxPieces> size_lines;
  } gather;
};

// A model version's picker, shared by every event loop, so that each pick sees the whole
// routing history (prefix affinity, the prefills outstanding on each replica), as one router
// would. Thread-safe through its mutex.
struct SharedPicker {
  explicit SharedPicker(const PickerOptions& options) : picker(options) {}
  std::mutex mutex;
  Picker picker;  // guarded by mutex
};

// What one event loop routes a model version with: the version's shared picker, kept while the
// version stays in the routing table, and the loop's own copy of the version's endpoint
// states, rebuilt with each new table.
struct VersionRouting {
  std::shared_ptr<SharedPicker> picker;
  EndpointStatesView states;
};

// One event loop with everything its requests touch: an acceptor on the shared port, the
// routing table it routes with and the routing state per model version, the tenant table it
// authenticates with, idle upstream
// connections per replica, the requests waiting for a replica, and its cached metric children.
// Used only from its own thread.
struct Worker {
  Worker(size_t index_in, GatewayStats& stats_in) : index(index_in), stats(stats_in, index_in) {}

  const size_t index;  // among the server's loops: the PerLoop copy this loop updates

  // Every client and upstream socket's deadline, for the watchdog. Declared first, so that it
  // outlives the sockets registered in it.
  std::unordered_set<SocketDeadline*> deadlines;
  // Shut down explicitly in Stop, before the rest, so that suspended coroutines die while the
  // pools and pickers they reference still exist.
  EventLoop loop;
  LoopSocket listener{loop};  // on the shared port
  // Counted by a reference count of this loop's own (SyncRoutes), which only its requests touch.
  std::shared_ptr<const RoutingTable> table;
  std::unordered_map<uint64_t, VersionRouting> routing;  // by VersionCounters::serial
  // Counted by a reference count of this loop's own, as `table` (SyncTenants).
  std::shared_ptr<const TenantTable> tenants;
  // Kept-alive connections by EndpointRuntime::serial, of routed replicas only.
  std::unordered_map<uint64_t, std::vector<std::unique_ptr<UpstreamConnection>>> idle;
  // Timers of the requests held for a replica: cancelled (waking them) when the routes change.
  std::vector<LoopTimer*> held;
  std::mt19937_64 random{std::random_device{}()};
  LoopStats stats;
  std::thread thread;
};

struct GatewayServer::Impl {
  Impl(GatewayConfig config_in, const Clock& clock_in);

  GatewayConfig config;  // its models and tenants moved into the first tables
  const Clock& clock;
  QuotaLedger ledger;  // by TenantEntry::id
  metrics::Registry metrics;
  GatewayStats stats;
  std::atomic<int64_t> in_flight{0};
  std::atomic<int64_t> held{0};  // requests waiting for a replica, all models
  std::vector<std::unique_ptr<Worker>> workers;
  // Replicas are scraped on an Asio event loop of their own, off the request path's loops.
  std::unique_ptr<asio::io_context> scrape_io = std::make_unique<asio::io_context>(1);
  std::thread scrape_thread;
  uint16_t port = 0;
  std::atomic<bool> stopped{false};

  // Serialises SetRoutes and Stop. Never taken on the request path.
  std::mutex routes_mutex;
  RoutingTableBuilder builder;  // guarded by routes_mutex
  // The table requests route with; a worker reloads it when `generation` differs from its own.
  std::atomic<std::shared_ptr<const RoutingTable>> table;
  std::atomic<uint64_t> generation{0};
  // Each routed version's picker by VersionCounters::serial, held by the loops routing it.
  std::mutex pickers_mutex;
  std::unordered_map<uint64_t, std::weak_ptr<SharedPicker>> pickers;  // guarded by pickers_mutex

  // Serialises SetTenants. Never taken on the request path.
  std::mutex tenants_mutex;
  TenantTableBuilder tenant_builder;  // guarded by tenants_mutex
  // The tenants requests authenticate with; a worker reloads them when `tenants_generation`
  // differs from its own table's.
  std::atomic<std::shared_ptr<const TenantTable>> tenants;
  std::atomic<uint64_t> tenants_generation{0};
};

// Brings `worker`'s routing table and per-version routing state up to date with the server's:
// one atomic load when nothing changed. Runs on the worker's thread.
void SyncRoutes(GatewayServer::Impl& server, Worker& worker);

// Brings `worker`'s tenant table up to date with the server's (one atomic load when nothing
// changed) and returns it. Runs on the worker's thread.
const TenantTable& SyncTenants(GatewayServer::Impl& server, Worker& worker);

// The /metrics page, with the gauges read at render time brought up to date.
std::string RenderMetrics(GatewayServer::Impl& server);

// Closes the sockets of `worker` whose deadline has passed, every kDeadlineSweepInterval, until
// the server stops.
asio::awaitable<void> DeadlineWatchdog(GatewayServer::Impl& server, Worker& worker);

// Serves one client connection until it closes, errs or times out (proxy.cc).
asio::awaitable<void> ServeConnection(GatewayServer::Impl& server, Worker& worker,
                                      std::unique_ptr<LoopSocket> client);

}  // namespace strata::gateway
