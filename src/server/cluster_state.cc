#include "server/cluster_state.h"

#include <algorithm>
#include <array>

#include "server/json_fields.h"
#include "server/resource_catalog.h"

namespace strata::server {
namespace {

using Json = nlohmann::json;

constexpr std::array<const char*, 4> kPhases = {"Pending", "Running", "Succeeded", "Failed"};

bool IsListedPhase(const std::string& phase) {
  return std::find(kPhases.begin(), kPhases.end(), phase) != kPhases.end();
}

// What `pod` charges the queue its spec.queue names: ComputeQueueUsage over this pod alone and
// a queue that the reference always resolves to, so that which pods count and what they request
// stays defined in one place. Empty when the pod holds nothing.
std::map<std::string, Quantity> ChargeOf(const Json& pod) {
  const Json queue = {{"metadata", {{"name", TextAt(pod, "/spec/queue")}}}};
  std::map<std::string, Quantity> charge;
  for (const QueueUsage& usage : ComputeQueueUsage({queue}, {pod})) {
    for (const auto& [resource, figures] : usage.resources) charge[resource] = figures.used;
  }
  return charge;
}

// Adds `sign` to `counts[key]`, dropping the entry when it reaches zero.
template <typename Key>
void AddCount(std::map<Key, int64_t>& counts, const Key& key, int sign) {
  auto [it, inserted] = counts.try_emplace(key, 0);
  it->second += sign;
  if (it->second == 0) counts.erase(it);
}

}  // namespace

ClusterStateTable::ClusterStateTable() { Clear(); }

bool ClusterStateTable::Counts(const std::string& kind) {
  const std::vector<ResourceType>& types = AllResourceTypes();
  return std::any_of(types.begin(), types.end(),
                     [&](const ResourceType& type) { return type.kind == kind; });
}

void ClusterStateTable::Clear() {
  contributions_.clear();
  queues_.clear();
  objects_by_kind_.clear();
  for (const ResourceType& type : AllResourceTypes()) objects_by_kind_[std::string(type.kind)] = 0;
  pods_by_phase_.clear();
  for (const char* phase : kPhases) pods_by_phase_[phase] = 0;
  gpus_total_ = 0;
  gpus_held_ = 0;
  pending_.clear();
  charges_.clear();
}

ClusterStateTable::Contribution ClusterStateTable::ContributionOf(const store::Object& object) {
  const Json& body = object.body;
  Contribution share;
  share.kind = object.key.kind;
  const auto pending = [&]() {
    share.pending = true;
    share.pending_key = {TextAt(body, "/metadata/namespace"), TextAt(body, "/spec/queue"),
                         TextAt(body, "/status/reason", "NotYetScheduled")};
  };
  if (share.kind == "Job") {
    if (TextAt(body, "/status/phase", "Pending") == "Pending") pending();
  } else if (share.kind == "Pod") {
    share.phase = TextAt(body, "/status/phase", "Pending");
    const Json& assigned = FieldAt(body, "/spec/assignedGpus");
    if (assigned.is_array() && share.phase != "Succeeded" && share.phase != "Failed") {
      share.gpus_held = static_cast<int64_t>(assigned.size());
    }
    // A Job's pods are counted as their job.
    if (TextAt(body, "/spec/owner/kind") != "Job" && TextAt(body, "/spec/nodeName").empty() &&
        share.phase == "Pending") {
      pending();
    }
    share.charged_to = {TextAt(body, "/metadata/namespace"), TextAt(body, "/spec/queue")};
    share.charge = ChargeOf(body);
  } else if (share.kind == "Node") {
    const Json& gpus = FieldAt(body, "/status/gpus");
    if (gpus.is_array()) share.gpus_total = static_cast<int64_t>(gpus.size());
  }
  return share;
}

void ClusterStateTable::Account(const Contribution& share, int sign) {
  objects_by_kind_[share.kind] += sign;
  if (share.kind == "Pod") {
    if (IsListedPhase(share.phase)) {
      pods_by_phase_[share.phase] += sign;
    } else {
      AddCount(pods_by_phase_, share.phase, sign);
    }
  }
  gpus_total_ += sign * share.gpus_total;
  gpus_held_ += sign * share.gpus_held;
  if (share.pending) AddCount(pending_, share.pending_key, sign);
  if (share.charge.empty()) return;
  std::map<std::string, ResourceCharge>& charges = charges_[share.charged_to];
  for (const auto& [resource, quantity] : share.charge) {
    ResourceCharge& charge = charges[resource];
    charge.sum += sign > 0 ? quantity : Quantity() - quantity;
    charge.pods += sign;
    if (charge.pods == 0) charges.erase(resource);
  }
  if (charges.empty()) charges_.erase(share.charged_to);
}

void ClusterStateTable::Put(const store::Object& object) {
  if (!Counts(object.key.kind)) return;
  Remove(object.key);
  Contribution share = ContributionOf(object);
  Account(share, +1);
  contributions_.emplace(object.key, std::move(share));
  if (object.key.kind == "Queue") queues_[object.key.name] = object.body;
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

std::vector<Json> ClusterStateTable::QueueBodies() const {
  std::vector<Json> bodies;
  bodies.reserve(queues_.size());
  for (const auto& [name, body] : queues_) bodies.push_back(body);
  return bodies;
}

std::vector<QueueUsage> ClusterStateTable::QueueUsages() const {
  const std::vector<Json> queues = QueueBodies();
  std::vector<QueueUsage> usages = ComputeQueueUsage(queues, {});
  std::map<std::string, QueueUsage*> by_name;
  for (QueueUsage& usage : usages) by_name[usage.name] = &usage;
  const api::QueueNames names = QueueNamesOf(queues);
  for (const auto& [reference, charges] : charges_) {
    const std::optional<std::string> name = names.Resolve(reference.first, reference.second);
    auto queue = name ? by_name.find(*name) : by_name.end();
    if (queue == by_name.end()) continue;
    for (const auto& [resource, charge] : charges) {
      queue->second->resources[resource].used += charge.sum;
    }
  }
  for (QueueUsage& usage : usages) {
    for (auto& [resource, figures] : usage.resources) {
      figures.borrowed = std::max(Quantity(), figures.used - figures.nominal);
    }
  }
  return usages;
}

ClusterStateTable::PendingCounts ClusterStateTable::Pending() const {
  const api::QueueNames names = QueueNamesOf(QueueBodies());
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
