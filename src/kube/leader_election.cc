#include "kube/leader_election.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <climits>
#include <utility>

#include "kube/resource.h"

namespace strata::kube {

using nlohmann::json;

namespace {

std::string HolderOf(const json& spec) {
  if (!spec.is_object() || !spec.contains("holderIdentity") ||
      !spec["holderIdentity"].is_string()) {
    return "";
  }
  return spec["holderIdentity"].get<std::string>();
}

int64_t TransitionsOf(const json& spec) {
  if (!spec.is_object() || !spec.contains("leaseTransitions") ||
      !spec["leaseTransitions"].is_number_integer()) {
    return 0;
  }
  return spec["leaseTransitions"].get<int64_t>();
}

// A write that another candidate's write beat: the round is lost, not failed.
bool LostRace(const Status& status) {
  return status.code() == StatusCode::kConflict || status.code() == StatusCode::kAlreadyExists;
}

}  // namespace

LeaderElector::LeaderElector(Client* client, LeaderElectionConfig config, const Clock* clock)
    : client_(client), config_(std::move(config)), clock_(clock), random_(std::random_device{}()) {}

void LeaderElector::Stop() {
  std::lock_guard lock(mutex_);
  stopped_ = true;
  wake_.notify_all();
}

bool LeaderElector::Stopped() const {
  std::lock_guard lock(mutex_);
  return stopped_;
}

bool LeaderElector::IsLeader() const {
  std::lock_guard lock(mutex_);
  return HolderOf(observed_spec_) == config_.identity;
}

std::string LeaderElector::leader() const {
  std::lock_guard lock(mutex_);
  return HolderOf(observed_spec_);
}

void LeaderElector::Observe(const json& spec, TimePoint now) {
  std::lock_guard lock(mutex_);
  if (spec != observed_spec_) {
    observed_spec_ = spec;
    observed_time_ = now;
  }
}

json LeaderElector::LeaseObject(const json& spec) const {
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", {{"name", config_.lease_name}, {"namespace", config_.lease_namespace}}},
          {"spec", spec}};
}

Result<bool> LeaderElector::TryAcquireOrRenew() {
  TimePoint now = clock_->Now();
  std::string now_text = FormatRfc3339Micro(now);
  int64_t duration_seconds =
      std::chrono::duration_cast<std::chrono::seconds>(config_.lease_duration).count();
  json mine = {{"holderIdentity", config_.identity},
               {"leaseDurationSeconds", duration_seconds},
               {"acquireTime", now_text},
               {"renewTime", now_text},
               {"leaseTransitions", 0}};

  Result<json> current =
      client_->Get(resources::kLeases, config_.lease_namespace, config_.lease_name);
  if (!current && current.error().code() == StatusCode::kNotFound) {
    Result<json> created =
        client_->Create(resources::kLeases, config_.lease_namespace, LeaseObject(mine));
    if (!created) {
      if (LostRace(created.error())) return false;
      return Err(created.error());
    }
    Observe(mine, now);
    return true;
  }
  if (!current) return Err(current.error());

  json spec = current->value("spec", json::object());
  Observe(spec, now);
  std::string holder = HolderOf(spec);
  bool held_by_me = holder == config_.identity;
  {
    std::lock_guard lock(mutex_);
    if (!holder.empty() && !held_by_me && observed_time_ + config_.lease_duration > now) {
      return false;  // held by another, who renewed it within lease_duration as we saw it
    }
  }
  if (held_by_me) {
    if (spec.contains("acquireTime")) mine["acquireTime"] = spec["acquireTime"];
    mine["leaseTransitions"] = TransitionsOf(spec);
  } else {
    mine["leaseTransitions"] = TransitionsOf(spec) + 1;
  }
  json lease = *current;
  lease["spec"] = mine;  // metadata keeps the resourceVersion read: the update's precondition
  Result<json> updated = client_->Update(resources::kLeases, config_.lease_namespace, lease);
  if (!updated) {
    if (LostRace(updated.error())) return false;
    return Err(updated.error());
  }
  Observe(mine, now);
  return true;
}

Status LeaderElector::Release() {
  if (!IsLeader()) return Status::Ok();
  Result<json> current =
      client_->Get(resources::kLeases, config_.lease_namespace, config_.lease_name);
  if (!current) return current.error();
  json spec = current->value("spec", json::object());
  if (HolderOf(spec) != config_.identity) {
    Observe(spec, clock_->Now());
    return Status::Ok();
  }
  TimePoint now = clock_->Now();
  std::string now_text = FormatRfc3339Micro(now);
  json released = {{"holderIdentity", ""},
                   {"leaseDurationSeconds", 1},
                   {"acquireTime", now_text},
                   {"renewTime", now_text},
                   {"leaseTransitions", TransitionsOf(spec)}};
  json lease = *current;
  lease["spec"] = released;
  Result<json> updated = client_->Update(resources::kLeases, config_.lease_namespace, lease);
  if (!updated) return updated.error();
  Observe(released, now);
  return Status::Ok();
}

bool LeaderElector::Wait(Duration duration) {
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, duration, [this] { return stopped_; });
  return !stopped_;
}

Status LeaderElector::Run(const LeaderCallbacks& callbacks) {
  std::string lease = config_.lease_namespace + "/" + config_.lease_name;
  std::string reported = leader();
  auto report = [&] {
    std::string now_leader = leader();
    if (now_leader != reported) {
      reported = now_leader;
      if (callbacks.on_new_leader) callbacks.on_new_leader(now_leader);
    }
  };
  // Acquire: retry_period with up to 120% jitter between tries, as client-go's JitterUntil.
  std::uniform_real_distribution<double> jitter(1.0, 2.2);
  while (true) {
    if (Stopped()) return Status::Ok();
    Result<bool> acquired = TryAcquireOrRenew();
    report();
    if (acquired && *acquired) break;
    if (!acquired) {
      spdlog::warn("leader election: cannot acquire lease {}: {}", lease,
                   acquired.error().ToString());
    }
    if (!Wait(std::chrono::duration_cast<Duration>(config_.retry_period * jitter(random_)))) {
      return Status::Ok();
    }
  }
  spdlog::info("leader election: {} acquired lease {}", config_.identity, lease);
  if (callbacks.on_started_leading) callbacks.on_started_leading();
  TimePoint last_renewal = clock_->Now();
  Status outcome = Status::Ok();
  while (Wait(config_.retry_period)) {
    Result<bool> renewed = TryAcquireOrRenew();
    report();
    if (renewed && *renewed) {
      last_renewal = clock_->Now();
      continue;
    }
    if (!renewed) {
      spdlog::warn("leader election: cannot renew lease {}: {}", lease, renewed.error().ToString());
    }
    std::string holder = leader();
    if (!holder.empty() && holder != config_.identity) {
      outcome = UnavailableError("lost lease " + lease + ": now held by " + holder);
      break;
    }
    if (clock_->Now() - last_renewal >= config_.renew_deadline) {
      outcome = UnavailableError("lost lease " + lease + ": not renewed within the deadline");
      break;
    }
  }
  if (outcome.ok() && config_.release_on_stop) {
    Status released = Release();
    if (!released.ok()) {
      spdlog::warn("leader election: cannot release lease {}: {}", lease, released.ToString());
    }
  }
  if (!outcome.ok()) spdlog::warn("leader election: {}", outcome.message());
  if (callbacks.on_stopped_leading) callbacks.on_stopped_leading();
  return outcome;
}

LeaderElectionConfig ElectionFor(std::string lease_namespace, std::string lease_name) {
  LeaderElectionConfig config;
  config.lease_namespace = std::move(lease_namespace);
  config.lease_name = std::move(lease_name);
  return config;
}

std::vector<nlohmann::json> LeaderElectionRules(const std::string& lease_name) {
  const GroupVersionResource& leases = resources::kLeases;
  nlohmann::json create = {
      {"apiGroups", {leases.group}}, {"resources", {leases.resource}}, {"verbs", {"create"}}};
  nlohmann::json named = {{"apiGroups", {leases.group}},
                          {"resources", {leases.resource}},
                          {"resourceNames", {lease_name}},
                          {"verbs", {"get", "update"}}};
  return {std::move(create), std::move(named)};
}

std::string CandidateIdentity() {
  char host[HOST_NAME_MAX + 1] = {};
  ::gethostname(host, sizeof(host) - 1);
  std::random_device random;
  return fmt::format("{}_{:08x}", host, random());
}

}  // namespace strata::kube
