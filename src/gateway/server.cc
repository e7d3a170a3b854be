#include "gateway/server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <unordered_set>

#include "gateway/server_impl.h"

namespace strata::gateway {
namespace {

constexpr auto kAsTuple = asio::as_tuple(asio::use_awaitable);
// How long accepting pauses after a failure such as running out of descriptors, while the
// connections already open go on.
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(100);

asio::awaitable<void> AcceptLoop(GatewayServer::Impl& server, Worker& worker) {
  LoopTimer pause(worker.loop);
  while (true) {
    auto [error, fd] = co_await worker.listener.Accept();
    if (error == asio::error::operation_aborted) co_return;
    if (error) {
      co_await pause.WaitFor(kAcceptRetryDelay);
      continue;
    }
    auto client = std::make_unique<LoopSocket>(worker.loop);
    if (client->Adopt(fd)) continue;
    asio::co_spawn(worker.loop.io(), ServeConnection(server, worker, std::move(client)),
                   asio::detached);
  }
}

// A kept-alive connection for scraping one replica. Its reads take up to 64 KiB at a time (a
// /metrics page in one or two reads, not Beast's default 512-byte steps).
struct ScrapeConnection {
  explicit ScrapeConnection(asio::io_context& io) : stream(io) { buffer.reserve(64 * 1024); }
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
};

// One GET /metrics on a kept-alive connection. Returns the body, or the failure.
asio::awaitable<Result<std::string>> ScrapeOnce(ScrapeConnection& connection,
                                                const tcp::endpoint& address,
                                                const std::string& host, Duration timeout) {
  if (!connection.stream.socket().is_open()) {
    connection.stream.expires_after(timeout);
    auto [ec] = co_await connection.stream.async_connect(address, kAsTuple);
    if (ec) co_return Err(UnavailableError(fmt::format("connect: {}", ec.message())));
    connection.buffer.clear();
  }
  http::request<http::empty_body> request{http::verb::get, "/metrics", 11};
  request.set(http::field::host, host);
  connection.stream.expires_after(timeout);
  auto [write_ec, written] = co_await http::async_write(connection.stream, request, kAsTuple);
  http::response_parser<http::string_body> parser;
  parser.body_limit(8 * 1024 * 1024);
  beast::error_code ec = write_ec;
  if (!ec) {
    std::tie(ec, written) =
        co_await http::async_read(connection.stream, connection.buffer, parser, kAsTuple);
  }
  if (ec) {
    connection.stream.close();
    co_return Err(UnavailableError(ec.message()));
  }
  if (!parser.get().keep_alive()) connection.stream.close();
  if (parser.get().result() != http::status::ok) {
    co_return Err(UnavailableError(fmt::format("HTTP {}", parser.get().result_int())));
  }
  co_return parser.release().body();
}

// Binds `address` without SO_REUSEPORT, then lets it go: fails while any socket listens there.
// The loops' listeners share their port with SO_REUSEPORT, which would also let another
// process of the same user bind it and silently take part of the connections; this way a
// second gateway on a port in use fails to start instead. (Two gateways starting within the
// same instant can still both pass.) SO_REUSEADDR: connections of an earlier run lingering in
// TIME_WAIT do not count.
ErrorCode ProbeUnshared(const tcp::endpoint& address) {
  asio::io_context io;
  tcp::acceptor probe(io);
  ErrorCode error;
  probe.open(address.protocol(), error);
  if (!error) probe.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) probe.bind(address, error);
  return error;
}

// Scrapes one replica until it leaves the routing table or the server stops.
asio::awaitable<void> ScrapeLoop(GatewayServer::Impl& server,
                                 std::shared_ptr<EndpointRuntime> runtime) {
  EndpointRuntime& endpoint = *runtime;
  ScrapeConnection connection(*server.scrape_io);
  asio::steady_timer timer(*server.scrape_io);
  const Duration timeout = MetricsLifetime(server.config.scrape_interval);
  auto& ok = server.stats.scrapes_total.With({endpoint.id, "ok"});
  auto& failed = server.stats.scrapes_total.With({endpoint.id, "error"});
  while (!server.stopped.load() && endpoint.routed.load()) {
    Result<std::string> body =
        co_await ScrapeOnce(connection, endpoint.address, endpoint.host, timeout);
    auto previous = endpoint.scrape.load();
    auto next = std::make_shared<ScrapeResult>(*previous);
    next->attempted = true;
    Result<EngineMetrics> metrics = body ? ParseEngineMetrics(*body) : Err(body.error());
    next->unreadable = body.has_value() && !metrics.has_value();
    const bool scraped = metrics.has_value();
    if (scraped) {
      next->reachable = true;
      next->metrics = std::move(*metrics);
      next->at = server.clock.Now();
    } else {
      // A replica that answers garbage is reachable; its figures just go stale.
      next->reachable = body.has_value();
      spdlog::debug("gateway: scrape of {} failed: {}", endpoint.id, metrics.error().ToString());
    }
    endpoint.PublishScrape(std::move(next));
    // Counted once published: a reader of the count finds the pickers able to see the result.
    (scraped ? ok : failed).Increment();
    const bool ejected =
        endpoint.ejected_until_ns.load() > server.clock.Now().time_since_epoch().count();
    // Looked up each time, not kept: the child is removed when the replica leaves, and a
    // replica that returns gets a new scraper.
    server.stats.endpoint_up.With({endpoint.id}).Set(scraped && !ejected ? 1.0 : 0.0);
    timer.expires_after(server.config.scrape_interval);
    co_await timer.async_wait(kAsTuple);
  }
  if (!endpoint.routed.load()) server.stats.endpoint_up.Remove({endpoint.id});
}

// Starts scraping the replicas a new table added. REQUIRES the routes mutex held.
void StartScrapers(GatewayServer::Impl& server,
                   const std::vector<std::shared_ptr<EndpointRuntime>>& added) {
  for (const auto& runtime : added) {
    asio::co_spawn(*server.scrape_io, ScrapeLoop(server, runtime), asio::detached);
  }
}

// Makes `table` the one requests route with. REQUIRES the routes mutex held.
void Publish(GatewayServer::Impl& server, std::shared_ptr<const RoutingTable> table) {
  const uint64_t generation = table->generation;
  server.table.store(std::move(table));
  server.generation.store(generation, std::memory_order_release);
}

}  // namespace

asio::awaitable<void> DeadlineWatchdog(GatewayServer::Impl& server, Worker& worker) {
  LoopTimer timer(worker.loop);
  while (!server.stopped.load()) {
    co_await timer.WaitFor(kDeadlineSweepInterval);
    const SteadyClock::time_point now = SteadyClock::now();
    // Closing a socket or ending its read only queues its pending operation's completion: the
    // set does not change during the sweep.
    for (SocketDeadline* deadline : worker.deadlines) deadline->ExpireIfPast(now);
  }
}

GatewayServer::Impl::Impl(GatewayConfig config_in, const Clock& clock_in)
    : config(std::move(config_in)),
      clock(clock_in),
      ledger(config.limits.max_queued),
      stats(metrics, "gateway") {}

namespace {

// Makes `tenants` the ones requests authenticate with, their quotas the ledger's, or changes
// nothing when they are invalid.
Status ApplyTenants(GatewayServer::Impl& server, const std::vector<TenantConfig>& tenants) {
  if (Status valid = ValidateTenants(tenants); !valid.ok()) return valid;
  std::lock_guard lock(server.tenants_mutex);
  TenantTableBuilder::Built built = server.tenant_builder.Build(tenants);
  // Quotas first: a request that finds a new tenant in the table finds its bucket too.
  const TimePoint now = server.clock.Now();
  for (const TenantEntry& tenant : built.table->entries()) {
    server.ledger.SetQuota(tenant.id, tenant.tokens_per_minute, now);
  }
  for (uint64_t id : built.removed) server.ledger.Forget(id);
  const uint64_t generation = built.table->generation();
  server.tenants.store(std::move(built.table));
  server.tenants_generation.store(generation, std::memory_order_release);
  return Status::Ok();
}

// The picker of the version with `serial`, made by the first loop that routes it.
std::shared_ptr<SharedPicker> PickerOf(GatewayServer::Impl& server, uint64_t serial) {
  std::lock_guard lock(server.pickers_mutex);
  std::erase_if(server.pickers, [](const auto& entry) { return entry.second.expired(); });
  std::shared_ptr<SharedPicker> picker = server.pickers[serial].lock();
  if (picker == nullptr) {
    PickerOptions options = server.config.picker;
    options.metrics_stale_after = MetricsLifetime(server.config.scrape_interval);
    picker = std::make_shared<SharedPicker>(options);
    server.pickers[serial] = picker;
  }
  return picker;
}

}  // namespace

void SyncRoutes(GatewayServer::Impl& server, Worker& worker) {
  if (worker.table != nullptr &&
      server.generation.load(std::memory_order_acquire) == worker.table->generation) {
    return;
  }
  std::shared_ptr<const RoutingTable> table = server.table.load();
  std::unordered_set<uint64_t> versions;
  for (const auto& model_versions : table->versions) {
    for (const RoutedVersion& version : model_versions) {
      versions.insert(version.counters->serial);
      VersionRouting& routing = worker.routing[version.counters->serial];
      if (routing.picker == nullptr) routing.picker = PickerOf(server, version.counters->serial);
      EndpointStatesView states(version.endpoints);
      // Prefix history of a replica that left would only mislead the picker if it came back.
      for (size_t i = 0; i < routing.states.size(); ++i) {
        bool kept = false;
        for (size_t j = 0; j < states.size() && !kept; ++j)
          kept = states.id(j) == routing.states.id(i);
        if (kept) continue;
        std::lock_guard lock(routing.picker->mutex);
        routing.picker->picker.ForgetEndpoint(routing.states.id(i));
      }
      routing.states = std::move(states);
    }
  }
  std::erase_if(worker.routing, [&](const auto& entry) { return !versions.contains(entry.first); });
  std::unordered_set<uint64_t> endpoints;
  for (const auto& runtime : table->endpoints) endpoints.insert(runtime->serial);
  std::erase_if(worker.idle, [&](const auto& entry) { return !endpoints.contains(entry.first); });
  // The loop's requests copy the table they route with; they count on a reference count of the
  // loop's own (an aliasing pointer), not on the shared table's, which every loop's requests
  // would otherwise write and move between cores.
  auto loop_owned = std::make_shared<std::shared_ptr<const RoutingTable>>(std::move(table));
  worker.table = std::shared_ptr<const RoutingTable>(loop_owned, loop_owned->get());
}

const TenantTable& SyncTenants(GatewayServer::Impl& server, Worker& worker) {
  if (worker.tenants == nullptr ||
      server.tenants_generation.load(std::memory_order_acquire) != worker.tenants->generation()) {
    // A reference count of the loop's own, as SyncRoutes does for the routing table.
    auto loop_owned = std::make_shared<std::shared_ptr<const TenantTable>>(server.tenants.load());
    worker.tenants = std::shared_ptr<const TenantTable>(loop_owned, loop_owned->get());
  }
  return *worker.tenants;
}

GatewayServer::GatewayServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GatewayServer::~GatewayServer() { Stop(); }

uint16_t GatewayServer::port() const { return impl_->port; }

std::string GatewayServer::MetricsText() const { return RenderMetrics(*impl_); }

std::string RenderMetrics(GatewayServer::Impl& server) {
  server.stats.in_flight_requests.With().Set(static_cast<double>(server.in_flight.load()));
  return server.metrics.RenderText();
}

Status GatewayServer::SetRoutes(std::vector<ModelConfig> models) {
  Impl& server = *impl_;
  std::lock_guard lock(server.routes_mutex);
  if (server.stopped.load()) return UnavailableError("the gateway has stopped");
  if (server.table.load()->models == models) return Status::Ok();
  Result<RoutingTableBuilder::Built> built = server.builder.Build(std::move(models));
  if (!built) return built.error();
  Publish(server, std::move(built->table));
  StartScrapers(server, built->added);
  // Each loop takes the new table now, not at its next request: an idle loop lets go of the old
  // table and of its kept-alive connections to replicas that left. Held requests then recheck.
  for (auto& worker : server.workers) {
    Worker* w = worker.get();
    w->loop.Post([&server, w] {
      SyncRoutes(server, *w);
      for (LoopTimer* timer : w->held) timer->Cancel();
    });
  }
  return Status::Ok();
}

Status GatewayServer::SetTenants(std::vector<TenantConfig> tenants) {
  if (impl_->stopped.load()) return UnavailableError("the gateway has stopped");
  return ApplyTenants(*impl_, tenants);
}

int64_t GatewayServer::InFlight(const std::string& endpoint) const {
  std::lock_guard lock(impl_->routes_mutex);
  return impl_->builder.InFlight(endpoint);
}

std::vector<VersionSignals> GatewayServer::Signals() const {
  std::shared_ptr<const RoutingTable> table = impl_->table.load();
  const TimePoint now = impl_->clock.Now();
  std::vector<VersionSignals> signals;
  for (const auto& model_versions : table->versions) {
    for (const RoutedVersion& version : model_versions) {
      const VersionCounters& counters = *version.counters;
      VersionSignals& out = signals.emplace_back();
      out.model = counters.model;
      out.version = counters.version;
      // Read in the opposite order to the request path's counting (arrival, answer, lateness),
      // so a reader never sees more answered than arrived, nor more late than answered.
      const PerLoop<VersionCounts>& counts = counters.counts;
      out.late_total = counts.Sum(&VersionCounts::late);
      out.answered_total = counts.Sum(&VersionCounts::answered);
      out.arrivals_total = counts.Sum(&VersionCounts::arrivals);
      out.in_flight = counts.Sum(&VersionCounts::in_flight);
      out.held = counts.Sum(&VersionCounts::held);
      out.tokens_total = counts.Sum(&VersionCounts::tokens);
      Duration busy{counts.Sum(&VersionCounts::busy_ticks)};
      for (const RoutedEndpoint& endpoint : version.endpoints) {
        const EndpointRuntime& runtime = *endpoint.runtime;
        busy += runtime.busy.OpenFor(now);
        const std::shared_ptr<const ScrapeResult> scrape = runtime.scrape.load();
        EndpointSignals& e = out.endpoints.emplace_back();
        e.id = runtime.id;
        e.in_flight = runtime.in_flight.load();
        e.reachable = scrape->reachable;
        e.waiting = scrape->metrics.waiting;
        e.running = scrape->metrics.running;
        e.kv_usage = scrape->metrics.kv_usage;
        e.prefix_cache_queries = scrape->metrics.prefix_cache_queries;
        e.prefix_cache_hits = scrape->metrics.prefix_cache_hits;
        e.scraped_at = scrape->at;
      }
      out.prefill_busy_seconds_total = ToSeconds(busy);
    }
  }
  return signals;
}

Result<std::unique_ptr<GatewayServer>> GatewayServer::Start(GatewayConfig config,
                                                            const std::string& host, uint16_t port,
                                                            const Clock& clock) {
  std::vector<ModelConfig> models = std::move(config.models);
  config.models.clear();
  std::vector<TenantConfig> tenants = std::move(config.tenants);
  config.tenants.clear();
  auto impl = std::make_unique<Impl>(std::move(config), clock);
  Impl& server = *impl;
  RETURN_IF_ERROR(ApplyTenants(server, tenants));
  ASSIGN_OR_RETURN(RoutingTableBuilder::Built built, server.builder.Build(std::move(models)));
  Publish(server, std::move(built.table));
  const int threads = server.config.threads > 0
                          ? server.config.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
  if (ec)
    return Err(InvalidArgumentError(fmt::format("listen address \"{}\": {}", host, ec.message())));
  if (port != 0) {
    if (ErrorCode error = ProbeUnshared(tcp::endpoint(address, port))) {
      return Err(
          UnavailableError(fmt::format("cannot listen on {}:{}: {}", host, port, error.message())));
    }
  }
  for (int i = 0; i < threads; ++i) {
    auto worker = std::make_unique<Worker>(static_cast<size_t>(i), server.stats);
    const tcp::endpoint bind_to(address, server.port == 0 ? port : server.port);
    if (ErrorCode error = worker->listener.Listen(bind_to, true)) {
      return Err(UnavailableError(
          fmt::format("cannot listen on {}:{}: {}", host, bind_to.port(), error.message())));
    }
    server.port = worker->listener.LocalEndpoint().port();
    SyncRoutes(server, *worker);
    server.workers.push_back(std::move(worker));
  }
  for (auto& worker : server.workers) {
    asio::co_spawn(worker->loop.io(), AcceptLoop(server, *worker), asio::detached);
    asio::co_spawn(worker->loop.io(), DeadlineWatchdog(server, *worker), asio::detached);
  }
  {
    std::lock_guard lock(server.routes_mutex);
    StartScrapers(server, built.added);
  }
  for (auto& worker : server.workers) {
    Worker* w = worker.get();
    w->thread = std::thread([w] { w->loop.Run(); });
  }
  server.scrape_thread = std::thread([&server] {
    auto work = asio::make_work_guard(*server.scrape_io);
    server.scrape_io->run();
  });
  return std::unique_ptr<GatewayServer>(new GatewayServer(std::move(impl)));
}

void GatewayServer::Stop() {
  std::lock_guard lock(impl_->routes_mutex);
  if (impl_->stopped.exchange(true)) return;
  for (auto& worker : impl_->workers) worker->loop.Stop();
  impl_->scrape_io->stop();
  for (auto& worker : impl_->workers) {
    if (worker->thread.joinable()) worker->thread.join();
  }
  if (impl_->scrape_thread.joinable()) impl_->scrape_thread.join();
  // Coroutine frames still suspended on these loops are destroyed with them, before the
  // state they reference.
  impl_->scrape_io.reset();
  for (auto& worker : impl_->workers) {
    worker->listener.Close();
    worker->idle.clear();  // sockets go before their loop
    worker->routing.clear();
    worker->loop.Shutdown();
  }
  impl_->workers.clear();
}

}  // namespace strata::gateway
