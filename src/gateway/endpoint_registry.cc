#include "gateway/endpoint_registry.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace strata::gateway {

EndpointRegistry::EndpointRegistry(const GatewayConfig& config) {
  std::map<std::string, size_t> by_id;
  for (const ModelConfig& model : config.models) {
    auto& model_versions = versions_.emplace_back();
    for (const VersionConfig& version : model.versions) {
      auto& indices = model_versions.emplace_back();
      for (const std::string& id : version.endpoints) {
        auto [it, inserted] = by_id.emplace(id, endpoints_.size());
        if (inserted) {
          auto runtime = std::make_unique<EndpointRuntime>();
          runtime->id = id;
          const size_t colon = id.rfind(':');
          runtime->host = id.substr(0, colon);
          std::from_chars(id.data() + colon + 1, id.data() + id.size(), runtime->port);
          endpoints_.push_back(std::move(runtime));
        }
        EndpointRuntime& runtime = *endpoints_[it->second];
        for (const std::string& adapter : model.adapters) {
          if (std::find(runtime.served_adapters.begin(), runtime.served_adapters.end(), adapter) ==
              runtime.served_adapters.end()) {
            runtime.served_adapters.push_back(adapter);
          }
        }
        indices.push_back(it->second);
      }
    }
  }
}

void EndpointRegistry::Eject(size_t index, TimePoint now, Duration duration) {
  endpoints_[index]->ejected_until_ns.store((now + duration).time_since_epoch().count(),
                                            std::memory_order_relaxed);
}

EndpointStatesView::EndpointStatesView(EndpointRegistry& registry, size_t model, size_t version)
    : registry_(registry),
      indices_(registry.VersionEndpoints(model, version)),
      states_(indices_.size()),
      applied_(indices_.size()) {
  for (size_t i = 0; i < indices_.size(); ++i) {
    const EndpointRuntime& runtime = registry_.endpoint(indices_[i]);
    states_[i].id = runtime.id;
    states_[i].served_adapters = runtime.served_adapters;
  }
}

std::span<const EndpointState> EndpointStatesView::Refresh(TimePoint now) {
  const int64_t now_ns = now.time_since_epoch().count();
  for (size_t i = 0; i < indices_.size(); ++i) {
    const EndpointRuntime& runtime = registry_.endpoint(indices_[i]);
    EndpointState& state = states_[i];
    std::shared_ptr<const ScrapeResult> scrape = runtime.scrape.load();
    if (scrape != applied_[i]) {
      state.waiting = scrape->metrics.waiting;
      state.running = scrape->metrics.running;
      state.kv_usage = scrape->metrics.kv_usage;
      state.loaded_adapters = scrape->metrics.loaded_adapters;
      state.metrics_at = scrape->at;
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
