#include "server/serving_loop.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "autoscaler/rate_policy.h"
#include "autoscaler/windowed_policy.h"
#include "cluster/indexes.h"
#include "controller/service_replicas.h"

namespace strata::server {
namespace {

std::string ServiceKey(const api::Service& service) {
  return service.metadata.namespace_name + "/" + service.metadata.name;
}

std::tuple<api::Autoscaling, int64_t, int64_t> ScalingOf(const api::ServiceSpec& spec) {
  return {spec.autoscaling, spec.min_replicas, spec.max_replicas};
}

Duration FromSeconds(double seconds) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

std::vector<gateway::ModelConfig> RoutesFromStore(
    const std::vector<cluster::Stored<api::Service>>& services,
    const std::vector<cluster::Stored<api::Pod>>& pods) {
  std::map<std::string, std::vector<cluster::Stored<api::Pod>>> by_service;
  for (const auto& pod : pods) {
    if (pod.value.spec.owner.kind != "Service") continue;
    by_service[pod.value.metadata.namespace_name + "/" + pod.value.spec.owner.name].push_back(pod);
  }
  std::vector<gateway::ModelConfig> models;
  std::set<std::string> taken;
  for (const auto& stored : services) {
    const api::Service& service = stored.value;
    if (!taken.insert(service.spec.model).second) {
      spdlog::warn("service {} serves model {}, which another service already serves; ignored",
                   ServiceKey(service), service.spec.model);
      continue;
    }
    std::vector<controller::Replica> replicas =
        controller::GroupReplicas(std::move(by_service[ServiceKey(service)]));
    gateway::ModelConfig model;
    model.name = service.spec.model;
    model.tenants = service.spec.tenants;
    for (const api::ServiceObjective& objective : service.spec.objectives) {
      model.objectives[objective.name] = gateway::PriorityClassOfObjective(objective.priority);
    }
    for (const api::ServiceVersion& version : service.spec.versions) {
      gateway::VersionConfig routed;
      routed.name = version.name;
      routed.weight = version.weight;
      for (const controller::Replica& replica : replicas) {
        if (replica.version == version.name && replica.Ready() && !replica.Endpoint().empty()) {
          routed.endpoints.push_back(replica.Endpoint());
        }
      }
      model.versions.push_back(std::move(routed));
    }
    models.push_back(std::move(model));
  }
  return models;
}

std::vector<gateway::ModelConfig> MergeRoutes(std::vector<gateway::ModelConfig> services,
                                              std::vector<gateway::ModelConfig> extra,
                                              std::vector<std::string>* shadowed) {
  std::set<std::string> taken;
  for (const gateway::ModelConfig& model : services) {
    taken.insert(model.name);
    taken.insert(model.adapters.begin(), model.adapters.end());
  }
  for (gateway::ModelConfig& model : extra) {
    bool clash = taken.contains(model.name);
    for (const std::string& adapter : model.adapters) clash = clash || taken.contains(adapter);
    if (clash) {
      if (shadowed != nullptr) shadowed->push_back(model.name);
      continue;
    }
    taken.insert(model.name);
    taken.insert(model.adapters.begin(), model.adapters.end());
    services.push_back(std::move(model));
  }
  return services;
}

Result<std::unique_ptr<autoscaler::ScalingPolicy>> PolicyForService(const api::ServiceSpec& spec,
                                                                    Duration cold_start) {
  const api::Autoscaling& a = spec.autoscaling;
  const bool to_zero = spec.min_replicas == 0 && a.scale_to_zero_after > Duration::zero();
  const int min_replicas = static_cast<int>(to_zero ? 0 : std::max<int64_t>(1, spec.min_replicas));
  const int max_replicas = static_cast<int>(std::max<int64_t>(min_replicas, spec.max_replicas));
  if (a.metric == "rps") {
    autoscaler::RateOptions options = autoscaler::RateDefaults(cold_start);
    options.initial_capacity = std::max(a.target, options.min_capacity);
    options.min_replicas = min_replicas;
    options.max_replicas = max_replicas;
    if (to_zero) options.scale_to_zero_after = a.scale_to_zero_after;
    Status valid = autoscaler::ValidateRateOptions(options);
    if (!valid.ok()) return Err(valid.WithPrefix("spec.autoscaling"));
    return std::unique_ptr<autoscaler::ScalingPolicy>(
        std::make_unique<autoscaler::RatePolicy>(options));
  }
  autoscaler::WindowedOptions options = autoscaler::KnativeDefaults();
  options.name = "windowed";
  options.stable_window = a.stable_window;
  options.panic_window = std::min(a.panic_window, a.stable_window);
  options.max_scale_up_rate = a.max_scale_up_rate;
  options.max_scale_down_rate = a.max_scale_down_rate;
  options.forecast_horizon = cold_start;
  if (a.metric == "kvCache") {
    options.target_kv_usage = std::clamp(a.target, 0.01, 1.0);
    options.target_load = 1e9;
  } else {
    options.target_load = std::max(a.target, 0.01);
    options.target_kv_usage = 0;
    options.count_running = a.metric != "queue";
  }
  options.min_replicas = min_replicas;
  options.max_replicas = max_replicas;
  if (to_zero) options.scale_to_zero_after = a.scale_to_zero_after;
  Status valid = autoscaler::ValidateWindowedOptions(options);
  if (!valid.ok()) return Err(valid.WithPrefix("spec.autoscaling"));
  return std::unique_ptr<autoscaler::ScalingPolicy>(
      std::make_unique<autoscaler::WindowedPolicy>(options));
}

ServingLoop::ServingLoop(store::Store& store, cluster::Cache& cache, const Clock& clock,
                         gateway::GatewayServer& gateway, metrics::Registry& registry,
                         controller::ServiceControllerOptions options, ServiceTokenLedger* tokens)
    : cache_(cache),
      clock_(clock),
      gateway_(gateway),
      tokens_(tokens),
      autoscaler_(clock, registry),
      controller_(store, cache, clock, options, this, this) {}

Status ServingLoop::RunOnce() {
  if (Status synced = cache_.Sync(); !synced.ok()) return synced;
  const std::vector<cluster::Stored<api::Service>> services =
      cluster::StoredOf<api::Service>(cache_.List("Service"));
  std::vector<cluster::Stored<api::Pod>> pods;
  for (const auto& service : services) {
    for (auto& pod : cluster::StoredOf<api::Pod>(cache_.Indexed(
             cluster::kPodsByOwner,
             cluster::OwnerIndexValue("Service", service.value.metadata.namespace_name,
                                      service.value.metadata.name)))) {
      pods.push_back(std::move(pod));
    }
  }
  std::vector<gateway::ModelConfig> routes = RoutesFromStore(services, pods);
  if (extra_routes_) {
    std::vector<std::string> shadowed;
    routes = MergeRoutes(std::move(routes), extra_routes_(), &shadowed);
    if (shadowed != shadowed_) {
      for (const std::string& name : shadowed) {
        spdlog::warn(
            "gateway: model {} of an InferencePool is a Service's model; the Service "
            "routes it",
            name);
      }
      shadowed_ = std::move(shadowed);
    }
  }
  if (routes != routes_) {
    if (Status set = gateway_.SetRoutes(routes); !set.ok()) return set;
    routes_ = std::move(routes);
  }
  signals_ = gateway_.Signals();
  if (tokens_ != nullptr) {
    // Cost is rolled up by the name of the service that owns the pods.
    std::map<std::string, std::string> service_of_model;
    for (const auto& service : services) {
      service_of_model.emplace(service.value.spec.model, service.value.metadata.name);
    }
    std::map<std::string, double> totals;
    for (const gateway::VersionSignals& version : signals_) {
      auto service = service_of_model.find(version.model);
      if (service != service_of_model.end()) {
        totals[service->second] += static_cast<double>(version.tokens_total);
      }
    }
    tokens_->Record(clock_.Now(), std::move(totals));
  }
  if (!acting_()) return Status::Ok();
  for (auto& [key, target] : targets_) target.seen = false;
  Status status = controller_.RunOnce();
  // Versions no longer served stop being autoscaled.
  for (auto it = targets_.begin(); it != targets_.end();) {
    if (it->second.seen) {
      ++it;
      continue;
    }
    (void)autoscaler_.RemoveTarget(it->first);
    it = targets_.erase(it);
  }
  return status;
}

void ServingLoop::ActOnlyWhile(std::function<bool()> acting) { acting_ = std::move(acting); }

void ServingLoop::AddRouteSource(RouteSource source) { extra_routes_ = std::move(source); }

int64_t ServingLoop::InFlight(const std::string& endpoint) const {
  // Also counts a draining replica, which has left the routing table (and Signals()).
  return gateway_.InFlight(endpoint);
}

autoscaler::LoadSample ServingLoop::Sample(const api::Service& service,
                                           const api::ServiceVersion& version,
                                           const controller::VersionReplicas& replicas) const {
  autoscaler::LoadSample sample;
  sample.ready_replicas = replicas.ready;
  sample.starting_replicas = replicas.starting;
  for (const gateway::VersionSignals& signals : signals_) {
    if (signals.model != service.spec.model || signals.version != version.name) continue;
    sample.arrivals_total = signals.arrivals_total;
    sample.answered_total = signals.answered_total;
    sample.late_total = signals.late_total;
    sample.prefill_busy_seconds_total = signals.prefill_busy_seconds_total;
    sample.gateway_queued = signals.held;
    double kv_sum = 0;
    int scraped = 0;
    int64_t engine_load = 0;
    for (const gateway::EndpointSignals& endpoint : signals.endpoints) {
      if (endpoint.scraped_at == TimePoint{}) continue;
      sample.waiting += endpoint.waiting;
      sample.running += endpoint.running;
      engine_load += endpoint.waiting + endpoint.running;
      kv_sum += endpoint.kv_usage;
      ++scraped;
    }
    if (scraped > 0) sample.kv_usage = kv_sum / scraped;
    // The gateway's own in-flight count is fresher than a scrape: a request sent since the last
    // scrape counts too.
    if (signals.in_flight > engine_load) sample.running += signals.in_flight - engine_load;
  }
  return sample;
}

controller::ScaleAdvice ServingLoop::Advise(const api::Service& service,
                                            const api::ServiceVersion& version,
                                            const controller::VersionReplicas& replicas) {
  const autoscaler::TargetKey key{ServiceKey(service), version.name};
  const ScalingSpec scaling = ScalingOf(service.spec);
  auto it = targets_.find(key);
  if (it != targets_.end() && it->second.scaling != scaling) {
    (void)autoscaler_.RemoveTarget(key);
    targets_.erase(it);
    it = targets_.end();
  }
  if (it == targets_.end()) {
    const Duration cold_start = replicas.cold_start_seconds > 0
                                    ? FromSeconds(replicas.cold_start_seconds)
                                    : std::chrono::seconds(60);
    Result<std::unique_ptr<autoscaler::ScalingPolicy>> policy =
        PolicyForService(service.spec, cold_start);
    Status added = policy ? autoscaler_.AddTarget(key, std::move(*policy)) : policy.error();
    if (!added.ok()) return {static_cast<int>(service.spec.min_replicas), added.message()};
    it = targets_.emplace(key, Target{scaling, false, replicas.cold_start_seconds}).first;
  }
  it->second.seen = true;
  // A replica that became ready since measured the cold start again: the policy looks ahead
  // by the latest figure.
  if (replicas.cold_start_seconds > 0 &&
      replicas.cold_start_seconds != it->second.cold_start_seconds) {
    it->second.cold_start_seconds = replicas.cold_start_seconds;
    (void)autoscaler_.SetColdStart(key, FromSeconds(replicas.cold_start_seconds));
  }
  Result<autoscaler::Decision> decision =
      autoscaler_.Evaluate(key, Sample(service, version, replicas));
  if (!decision) return {replicas.ready + replicas.starting, decision.error().message()};
  return {decision->desired, decision->reason};
}

}  // namespace strata::server
