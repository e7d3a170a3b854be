#include "server/cluster_state.h"

#include <algorithm>
#include <array>

#include "api/pod_contract.h"
#include "api/queue_names.h"
#include "api/resource_catalog.h"

namespace strata::server {
namespace {

constexpr std::array<api::PodPhase, 4> kPhases = {api::PodPhase::kPending, api::PodPhase::kRunning,
                                                  api::PodPhase::kSucceeded,
                                                  api::PodPhase::kFailed};

// Adds `sign` to `counts[key]`, dropping the entry when it reaches zero.
template <typename Key>
void AddCount(std::map<Key, int64_t>& counts, const Key& key, int sign) {
  auto [it, inserted] = counts.try_emplace(key, 0);
  it->second += sign;
  if (it->second == 0) counts.erase(it);
}

std::string ReasonOr(const std::string& reason) {
  return reason.empty() ? std::string("NotYetScheduled") : reason;
}

}  // namespace

ClusterStateTable::ClusterStateTable() { Clear(); }

bool ClusterStateTable::Counts(const std::string& kind) {
  const std::vector<api::ResourceType>& types = api::AllResourceTypes();
  return std::any_of(types.begin(), types.end(),
                     [&](const api::ResourceType& type) { return type.kind == kind; });
}

void ClusterStateTable::Clear() {
  contributions_.clear();
  queues_.clear();
  objects_by_kind_.clear();
  for (const api::ResourceType& type : api::AllResourceTypes())
    objects_by_kind_[std::string(type.kind)] = 0;
  pods_by_phase_.clear();
  for (api::PodPhase phase : kPhases) pods_by_phase_[std::string(api::PodPhaseName(phase))] = 0;
  gpus_total_ = 0;
  gpus_held_ = 0;
  pending_.clear();
}

ClusterStateTable::Contribution ClusterStateTable::ContributionOf(
    const cluster::CachedObject& object) {
  Contribution share;
  share.kind = object.raw.key.kind;
  if (const api::Job* job = object.As<api::Job>()) {
    if (job->status.phase == api::JobPhase::kPending) {
      share.pending = true;
      share.pending_key = {job->metadata.namespace_name, job->spec.queue,
                           ReasonOr(job->status.reason)};
    }
  } else if (const api::Pod* pod = object.As<api::Pod>()) {
    share.phase = api::PodPhaseName(pod->status.phase);
    if (!api::PodTerminal(*pod)) {
      share.gpus_held = static_cast<int64_t>(pod->spec.assigned_gpus.size());
    }
    // A Job's pods are counted as their job.
    if (pod->spec.owner.kind != "Job" && pod->spec.node_name.empty() &&
        pod->status.phase == api::PodPhase::kPending) {
      share.pending = true;
      share.pending_key = {pod->metadata.namespace_name, pod->spec.queue,
                           ReasonOr(pod->status.reason)};
    }
  } else if (const api::Node* node = object.As<api::Node>()) {
    share.gpus_total = static_cast<int64_t>(node->status.gpus.size());
  }
  return share;
}

void ClusterStateTable::Account(const Contribution& share, int sign) {
  objects_by_kind_[share.kind] += sign;
  if (!share.phase.empty()) pods_by_phase_[share.phase] += sign;
  gpus_total_ += sign * share.gpus_total;
  gpus_held_ += sign * share.gpus_held;
  if (share.pending) AddCount(pending_, share.pending_key, sign);
}

void ClusterStateTable::Put(const cluster::CachedObject& object) {
  const store::ObjectKey& key = object.raw.key;
  if (!Counts(key.kind)) return;
  Remove(key);
  Contribution share = ContributionOf(object);
  Account(share, +1);
  contributions_.emplace(key, std::move(share));
  if (const api::Queue* queue = object.As<api::Queue>()) queues_[key.name] = *queue;
}

void ClusterStateTable::Remove(const store::ObjectKey& key) {
  auto held = contributions_.find(key);
  if (held == contributions_.end()) return;
  Account(held->second, -1);
  contributions_.erase(held);
  if (key.kind == "Queue") queues_.erase(key.name);
}

ClusterTotals ClusterStateTable::Totals() const {
  return ClusterTotals{objects_by_kind_, pods_by_phase_, gpus_total_, gpus_held_};
}

std::map<std::string, std::map<std::string, api::QueueResourceUsage>>
ClusterStateTable::QueueUsages() const {
  std::map<std::string, std::map<std::string, api::QueueResourceUsage>> out;
  for (const auto& [name, queue] : queues_) out[name] = api::UsageByResource(queue);
  return out;
}

ClusterStateTable::PendingCounts ClusterStateTable::Pending() const {
  std::vector<api::Queue> queues;
  queues.reserve(queues_.size());
  for (const auto& [name, queue] : queues_) queues.push_back(queue);
  const api::QueueNames names(queues);
  PendingCounts counts;
  for (const auto& [key, count] : pending_) {
    const auto& [namespace_name, queue_reference, reason] = key;
    counts.by_reason[{reason}] += static_cast<double>(count);
    if (std::optional<std::string> queue = names.Resolve(namespace_name, queue_reference)) {
      counts.by_queue[{*queue, reason}] += static_cast<double>(count);
    }
  }
  return counts;
}

}  // namespace strata::server
