#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "gateway/config.h"
#include "gateway/engine_metrics.h"
#include "gateway/picker.h"

namespace strata::gateway {

// The last scrape of one replica: immutable once published.
struct ScrapeResult {
  bool attempted = false;  // a scrape has finished, successfully or not
  bool reachable = false;  // the last attempt got an answer
  EngineMetrics metrics;   // valid when `at` is set
  TimePoint at{};          // when the last successful scrape finished
};

// The live, shared state of one replica: the scraper publishes ScrapeResults, request paths
// count in-flight requests and eject the replica after a failure. Lock-free: every field is an
// atomic, and a ScrapeResult is replaced whole (readers keep the one they loaded).
struct EndpointRuntime {
  std::string id;  // "host:port"
  std::string host;
  uint16_t port = 0;
  std::vector<std::string> served_adapters;
  std::atomic<int64_t> in_flight{0};
  std::atomic<int64_t> ejected_until_ns{0};
  std::atomic<std::shared_ptr<const ScrapeResult>> scrape{std::make_shared<const ScrapeResult>()};
};

// Every replica named in the configuration, once each, and the endpoint list of each model
// version. Built once; the set never changes afterwards (a new configuration means a new
// gateway). Thread-safe: the structure is immutable and each EndpointRuntime is lock-free.
class EndpointRegistry {
 public:
  // REQUIRES: `config` validated (ParseGatewayConfig).
  explicit EndpointRegistry(const GatewayConfig& config);

  size_t size() const { return endpoints_.size(); }
  EndpointRuntime& endpoint(size_t index) { return *endpoints_[index]; }
  // Indices into the registry of the endpoints of version `version` of model `model`.
  const std::vector<size_t>& VersionEndpoints(size_t model, size_t version) const {
    return versions_[model][version];
  }

  // Keeps `index` out of routing until now + `duration`.
  void Eject(size_t index, TimePoint now, Duration duration);

 private:
  std::vector<std::unique_ptr<EndpointRuntime>> endpoints_;
  std::vector<std::vector<std::vector<size_t>>> versions_;
};

// One event loop's copy of the endpoint states of one model version, as the picker reads them.
// Refresh brings it up to date in place: in-flight counts and health every time, the scraped
// figures only when the scraper published a new ScrapeResult, so a request copies no strings
// and allocates nothing. Owned by one event loop (a Worker); not thread-safe.
class EndpointStatesView {
 public:
  // `registry` must outlive the view.
  EndpointStatesView(EndpointRegistry& registry, size_t model, size_t version);

  // The states now: scraped figures, in-flight counts, health (ejected, or unreachable at the
  // last scrape, means unhealthy). The span stays valid until the next Refresh.
  std::span<const EndpointState> Refresh(TimePoint now);

 private:
  EndpointRegistry& registry_;
  const std::vector<size_t>& indices_;  // into the registry
  std::vector<EndpointState> states_;
  std::vector<std::shared_ptr<const ScrapeResult>> applied_;  // the scrape each state shows
};

}  // namespace strata::gateway
