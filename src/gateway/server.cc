#include "gateway/server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "gateway/server_impl.h"

namespace strata::gateway {
namespace {

using ReusePort = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;

asio::awaitable<void> AcceptLoop(GatewayServer::Impl& server, Worker& worker) {
  while (true) {
    auto [ec, socket] = co_await worker.acceptor->async_accept(kAsTuple);
    if (ec == asio::error::operation_aborted || !worker.acceptor->is_open()) co_return;
    if (ec) continue;  // e.g. EMFILE: keep serving the connections already open
    socket.set_option(tcp::no_delay(true));
    asio::co_spawn((*worker.io), ServeConnection(server, worker, std::move(socket)),
                   asio::detached);
  }
}

// One GET /metrics on a kept-alive connection. Returns the body, or the failure.
asio::awaitable<Result<std::string>> ScrapeOnce(UpstreamConnection& connection,
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

asio::awaitable<void> ScrapeLoop(GatewayServer::Impl& server, Worker& worker, size_t index) {
  EndpointRuntime& endpoint = server.registry.endpoint(index);
  UpstreamConnection connection((*worker.io).get_executor());
  asio::steady_timer timer((*worker.io));
  const Duration timeout =
      std::max<Duration>(server.config.scrape_interval * 5, std::chrono::milliseconds(500));
  auto& ok = server.stats.scrapes_total.With({endpoint.id, "ok"});
  auto& failed = server.stats.scrapes_total.With({endpoint.id, "error"});
  auto& up = server.stats.endpoint_up.With({endpoint.id});
  while (!server.stopped.load()) {
    Result<std::string> body =
        co_await ScrapeOnce(connection, server.resolved[index], endpoint.host, timeout);
    auto previous = endpoint.scrape.load();
    auto next = std::make_shared<ScrapeResult>(*previous);
    next->attempted = true;
    Result<EngineMetrics> metrics = body ? ParseEngineMetrics(*body) : Err(body.error());
    if (metrics) {
      next->reachable = true;
      next->metrics = std::move(*metrics);
      next->at = server.clock.Now();
      ok.Increment();
    } else {
      // A replica that answers garbage is reachable; its figures just go stale.
      next->reachable = body.has_value();
      failed.Increment();
      spdlog::debug("gateway: scrape of {} failed: {}", endpoint.id, metrics.error().ToString());
    }
    endpoint.scrape.store(std::move(next));
    const bool ejected =
        endpoint.ejected_until_ns.load() > server.clock.Now().time_since_epoch().count();
    up.Set(metrics.has_value() && !ejected ? 1.0 : 0.0);
    timer.expires_after(server.config.scrape_interval);
    co_await timer.async_wait(kAsTuple);
  }
}

}  // namespace

GatewayServer::Impl::Impl(GatewayConfig config_in, const Clock& clock_in)
    : config(std::move(config_in)),
      clock(clock_in),
      router(config),
      registry(config),
      ledger(config.tenants, config.limits.max_queued, clock_in.Now()),
      stats(metrics, "gateway") {
  for (size_t t = 0; t < config.tenants.size(); ++t) {
    for (const std::string& key : config.tenants[t].keys) tenant_by_key.emplace(key, t);
  }
}

GatewayServer::GatewayServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GatewayServer::~GatewayServer() { Stop(); }

uint16_t GatewayServer::port() const { return impl_->port; }

std::string GatewayServer::MetricsText() const {
  impl_->stats.in_flight_requests.With().Set(static_cast<double>(impl_->in_flight.load()));
  return impl_->metrics.RenderText();
}

Result<std::unique_ptr<GatewayServer>> GatewayServer::Start(GatewayConfig config,
                                                            const std::string& host, uint16_t port,
                                                            const Clock& clock) {
  auto impl = std::make_unique<Impl>(std::move(config), clock);
  Impl& server = *impl;
  const int threads = server.config.threads > 0
                          ? server.config.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Replica addresses are resolved once, here: the request path never waits on DNS.
  {
    asio::io_context resolver_io;
    tcp::resolver resolver(resolver_io);
    for (size_t i = 0; i < server.registry.size(); ++i) {
      const EndpointRuntime& endpoint = server.registry.endpoint(i);
      boost::system::error_code ec;
      auto results = resolver.resolve(endpoint.host, std::to_string(endpoint.port), ec);
      if (ec || results.empty()) {
        return Err(InvalidArgumentError(
            fmt::format("endpoint \"{}\": cannot resolve: {}", endpoint.id, ec.message())));
      }
      server.resolved.push_back(results.begin()->endpoint());
    }
  }
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
  if (ec)
    return Err(InvalidArgumentError(fmt::format("listen address \"{}\": {}", host, ec.message())));
  for (int i = 0; i < threads; ++i) {
    auto worker = std::make_unique<Worker>(server.stats, server.config);
    worker->acceptor = std::make_unique<tcp::acceptor>((*worker->io));
    const tcp::endpoint bind_to(address, server.port == 0 ? port : server.port);
    tcp::acceptor& acceptor = *worker->acceptor;
    acceptor.open(bind_to.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.set_option(ReusePort(true), ec);
    if (!ec) acceptor.bind(bind_to, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return Err(UnavailableError(
          fmt::format("cannot listen on {}:{}: {}", host, bind_to.port(), ec.message())));
    }
    server.port = acceptor.local_endpoint().port();
    for (size_t m = 0; m < server.config.models.size(); ++m) {
      auto& per_version = worker->routing.emplace_back();
      for (size_t v = 0; v < server.config.models[m].versions.size(); ++v) {
        per_version.push_back(VersionRouting{Picker(server.config.picker),
                                             EndpointStatesView(server.registry, m, v)});
      }
    }
    worker->idle.resize(server.registry.size());
    server.workers.push_back(std::move(worker));
  }
  for (auto& worker : server.workers) {
    asio::co_spawn((*worker->io), AcceptLoop(server, *worker), asio::detached);
  }
  // Scrapes spread over the loops; each replica is scraped by one loop.
  for (size_t i = 0; i < server.registry.size(); ++i) {
    Worker& worker = *server.workers[i % server.workers.size()];
    asio::co_spawn((*worker.io), ScrapeLoop(server, worker, i), asio::detached);
  }
  for (auto& worker : server.workers) {
    Worker* w = worker.get();
    w->thread = std::thread([w] { w->io->run(); });
  }
  return std::unique_ptr<GatewayServer>(new GatewayServer(std::move(impl)));
}

void GatewayServer::Stop() {
  if (impl_->stopped.exchange(true)) return;
  for (auto& worker : impl_->workers) (*worker->io).stop();
  for (auto& worker : impl_->workers) {
    if (worker->thread.joinable()) worker->thread.join();
  }
  // Coroutine frames still suspended on these loops are destroyed with them, before the
  // state they reference.
  for (auto& worker : impl_->workers) {
    worker->acceptor.reset();
    worker->idle.clear();  // sockets go before their loop
    worker->io.reset();
  }
  impl_->workers.clear();
}

}  // namespace strata::gateway
