#include "gateway/endpoint_registry.h"

namespace strata::gateway {

EndpointStatesView::EndpointStatesView(std::span<const RoutedEndpoint> endpoints)
    : states_(endpoints.size()),
      applied_(endpoints.size()),
      applied_count_(endpoints.size(), UINT64_MAX) {
  for (size_t i = 0; i < endpoints.size(); ++i) {
    runtimes_.push_back(endpoints[i].runtime.get());
    states_[i].id = endpoints[i].runtime->id;
    states_[i].served_adapters = endpoints[i].served_adapters;
  }
}

std::span<const EndpointState> EndpointStatesView::Refresh(TimePoint now) {
  const int64_t now_ns = now.time_since_epoch().count();
  for (size_t i = 0; i < runtimes_.size(); ++i) {
    const EndpointRuntime& runtime = *runtimes_[i];
    EndpointState& state = states_[i];
    const uint64_t published = runtime.scrapes_published.load(std::memory_order_acquire);
    if (published != applied_count_[i]) {
      applied_count_[i] = published;
      std::shared_ptr<const ScrapeResult> scrape = runtime.scrape.load();
      state.waiting = scrape->metrics.waiting;
      state.running = scrape->metrics.running;
      state.kv_usage = scrape->metrics.kv_usage;
      state.loaded_adapters = scrape->metrics.loaded_adapters;
      state.metrics_at = scrape->at;
      state.metrics_unreadable = scrape->unreadable;
      applied_[i] = std::move(scrape);
    }
    const ScrapeResult& current = *applied_[i];
    state.healthy = runtime.ejected_until_ns.load(std::memory_order_relaxed) <= now_ns &&
                    (current.reachable || !current.attempted);
    state.in_flight = runtime.in_flight.load(std::memory_order_relaxed);
  }
  return states_;
}

}  // namespace strata::gateway
