#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "gateway/busy_meter.h"
#include "gateway/engine_metrics.h"
#include "gateway/picker.h"

namespace strata::gateway {

// The last scrape of one replica: immutable once published.
struct ScrapeResult {
  bool attempted = false;  // a scrape has finished, successfully or not
  bool reachable = false;  // the last attempt got an answer
  // The last attempt's answer was no reading (ParseEngineMetrics refused it): `metrics` are the
  // last good ones, if any, and the replica's load is unknown.
  bool unreadable = false;
  EngineMetrics metrics;  // valid when `at` is set
  TimePoint at{};         // when the last successful scrape finished
};

// The live, shared state of one replica: the scraper publishes ScrapeResults, request paths
// count in-flight requests and eject the replica after a failure. One object per replica for as
// long as the replica stays in the gateway's routing table, whatever else the table's updates
// change. The identity fields are set before the object is shared and never change, every
// other field is an atomic or the busy meter (which locks), and a ScrapeResult is replaced
// whole (readers keep the one they loaded). Shared (shared_ptr) by the routing tables that name it
// and the requests and scraper using it.
struct EndpointRuntime {
  std::string id;  // "host:port"
  std::string host;
  uint16_t port = 0;
  uint64_t serial = 0;                     // unique for the gateway's life, never reused
  boost::asio::ip::tcp::endpoint address;  // resolved once, when the replica joined
  std::atomic<int64_t> in_flight{0};
  std::atomic<int64_t> ejected_until_ns{0};
  std::atomic<std::shared_ptr<const ScrapeResult>> scrape{std::make_shared<const ScrapeResult>()};
  // How many ScrapeResults have been published: a reader loads `scrape` (a lock and a reference
  // count, on memory every event loop would write) only when this moved.
  std::atomic<uint64_t> scrapes_published{0};
  // False once the replica left the routing table: its scraper stops, its idle upstream
  // connections are dropped; requests already sent to it run to their end.
  std::atomic<bool> routed{true};
  // Time with a request sent here still waiting for its first token.
  BusyMeter busy;

  // Makes `result` the last scrape. Only the replica's scraper calls it.
  void PublishScrape(std::shared_ptr<const ScrapeResult> result) {
    scrape.store(std::move(result));
    scrapes_published.fetch_add(1, std::memory_order_release);
  }

  // Keeps the replica out of routing until now + `duration`.
  void Eject(TimePoint now, Duration duration) {
    ejected_until_ns.store((now + duration).time_since_epoch().count(), std::memory_order_relaxed);
  }
};

// One replica as a routing table lists it for a model version: its shared runtime and the LoRA
// adapters it may serve (those of every model that names it). Plain data.
struct RoutedEndpoint {
  std::shared_ptr<EndpointRuntime> runtime;
  std::vector<std::string> served_adapters;
};

// One event loop's copy of the endpoint states of one model version, as the picker reads them.
// Refresh brings it up to date in place: in-flight counts and health every time, the scraped
// figures only when the scraper published a new ScrapeResult, so a request copies no strings,
// allocates nothing and writes no memory shared with other loops. Owned by one event loop (a
// Worker); not thread-safe.
class EndpointStatesView {
 public:
  EndpointStatesView() = default;
  // The runtimes of `endpoints` must outlive the view (the routing table holding them does).
  explicit EndpointStatesView(std::span<const RoutedEndpoint> endpoints);

  // The states now: scraped figures, in-flight counts, health (ejected, or unreachable at the
  // last scrape, means unhealthy). The span stays valid until the next Refresh.
  std::span<const EndpointState> Refresh(TimePoint now);

  bool empty() const { return runtimes_.empty(); }
  // The replica behind Refresh()'s element `index`.
  EndpointRuntime& runtime(size_t index) const { return *runtimes_[index]; }
  const std::string& id(size_t index) const { return states_[index].id; }
  size_t size() const { return runtimes_.size(); }

 private:
  std::vector<EndpointRuntime*> runtimes_;
  std::vector<EndpointState> states_;
  std::vector<std::shared_ptr<const ScrapeResult>> applied_;  // the scrape each state shows
  // The runtime's scrapes_published when applied_ was loaded; none loaded yet: UINT64_MAX.
  std::vector<uint64_t> applied_count_;
};

}  // namespace strata::gateway
