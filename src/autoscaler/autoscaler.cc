#include "autoscaler/autoscaler.h"

#include "fmt/format.h"

namespace strata::autoscaler {

Autoscaler::Autoscaler(const Clock& clock, metrics::Registry& registry)
    : clock_(clock), stats_(registry, "autoscaler") {}

Status Autoscaler::AddTarget(const TargetKey& key, std::unique_ptr<ScalingPolicy> policy) {
  if (targets_.contains(key)) {
    return AlreadyExistsError(
        fmt::format("service {} version {} is already autoscaled", key.service, key.version));
  }
  targets_.emplace(key, Target{std::move(policy), false, {}});
  return Status::Ok();
}

Status Autoscaler::RemoveTarget(const TargetKey& key) {
  if (targets_.erase(key) == 0) {
    return NotFoundError(
        fmt::format("service {} version {} is not autoscaled", key.service, key.version));
  }
  const std::vector<std::string> labels = {key.service, key.version};
  stats_.desired_replicas.Remove(labels);
  stats_.ready_replicas.Remove(labels);
  stats_.starting_replicas.Remove(labels);
  stats_.load_requests.Remove(labels);
  stats_.gateway_queued_requests.Remove(labels);
  stats_.kv_usage_ratio.Remove(labels);
  stats_.panic.Remove(labels);
  stats_.arrival_rate_requests_per_second.Remove(labels);
  stats_.provisioned_rate_requests_per_second.Remove(labels);
  stats_.replica_capacity_requests_per_second.Remove(labels);
  stats_.scale_decisions_total.Remove({key.service, key.version, "up"});
  stats_.scale_decisions_total.Remove({key.service, key.version, "down"});
  return Status::Ok();
}

Status Autoscaler::SetColdStart(const TargetKey& key, Duration cold_start) {
  auto it = targets_.find(key);
  if (it == targets_.end()) {
    return NotFoundError(
        fmt::format("service {} version {} is not autoscaled", key.service, key.version));
  }
  if (cold_start < Duration{0}) return InvalidArgumentError("coldStart: must be >= 0");
  it->second.policy->SetColdStart(cold_start);
  return Status::Ok();
}

Result<Decision> Autoscaler::Evaluate(const TargetKey& key, const LoadSample& sample) {
  auto it = targets_.find(key);
  if (it == targets_.end()) {
    return Err(NotFoundError(
        fmt::format("service {} version {} is not autoscaled", key.service, key.version)));
  }
  Target& target = it->second;
  Decision decision = target.policy->Decide(sample, clock_.Now());
  const std::vector<std::string> labels = {key.service, key.version};
  const int before =
      target.decided ? target.last.desired : sample.ready_replicas + sample.starting_replicas;
  if (decision.desired != before) {
    stats_.scale_decisions_total
        .With({key.service, key.version, decision.desired > before ? "up" : "down"})
        .Increment();
  }
  stats_.desired_replicas.With(labels).Set(decision.desired);
  stats_.ready_replicas.With(labels).Set(sample.ready_replicas);
  stats_.starting_replicas.With(labels).Set(sample.starting_replicas);
  stats_.load_requests.With(labels).Set(static_cast<double>(sample.Load()));
  stats_.gateway_queued_requests.With(labels).Set(static_cast<double>(sample.gateway_queued));
  stats_.kv_usage_ratio.With(labels).Set(sample.kv_usage);
  stats_.panic.With(labels).Set(decision.panic ? 1 : 0);
  stats_.arrival_rate_requests_per_second.With(labels).Set(decision.arrival_rate);
  stats_.provisioned_rate_requests_per_second.With(labels).Set(decision.forecast_rate);
  stats_.replica_capacity_requests_per_second.With(labels).Set(decision.capacity_per_replica);
  target.decided = true;
  target.last = decision;
  return decision;
}

const Decision* Autoscaler::LastDecision(const TargetKey& key) const {
  auto it = targets_.find(key);
  return it == targets_.end() || !it->second.decided ? nullptr : &it->second.last;
}

}  // namespace strata::autoscaler
