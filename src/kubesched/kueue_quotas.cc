#include "kubesched/kueue_quotas.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/field_decoder.h"
#include "common/json_member.h"
#include "common/quantity.h"

namespace strata::kubesched {
namespace {

using nlohmann::json;
using scheduler::Resource;

std::optional<Resource> QuotaResource(const std::string& name) {
  for (Resource resource : kQuotaResources)
    if (scheduler::ResourceName(resource) == name) return resource;
  return std::nullopt;
}

// A quota in the scheduler's units: milli-CPUs, bytes, milli-GPUs.
Result<int64_t> Amount(const json& value, Resource resource) {
  ASSIGN_OR_RETURN(Quantity quantity, QuantityFromJson(value));
  return resource == Resource::kMemory ? quantity.milli() / 1000 : quantity.milli();
}

// One ClusterQueue as a Queue, or why strata cannot enforce it as Kueue would.
Result<scheduler::Queue> QueueFrom(const json& object, const std::map<std::string, int>& flavors) {
  auto refuse = [](std::string why) { return Err(InvalidArgumentError(std::move(why))); };
  const json& spec = MemberOrNull(object, "spec");
  scheduler::Queue queue;
  queue.name = StringMemberOr(MemberOrNull(object, "metadata"), "name");
  queue.cohort = StringMemberOr(spec, "cohortName", StringMemberOr(spec, "cohort"));
  if (std::string stop = StringMemberOr(spec, "stopPolicy", "None"); stop != "None") {
    return refuse(fmt::format("it is stopped (spec.stopPolicy {})", stop));
  }
  const json& selector = MemberOrNull(spec, "namespaceSelector");
  if (selector.is_null()) {
    return refuse("it admits no namespace (spec.namespaceSelector is unset; {} admits all)");
  }
  if (!selector.is_object() || !selector.empty()) {
    return refuse("strata reads spec.namespaceSelector {} (every namespace) only");
  }
  if (!MemberOrNull(spec, "admissionChecksStrategy").is_null() ||
      !MemberOrNull(spec, "admissionChecks").is_null()) {
    return refuse("strata runs no admission checks");
  }
  if (const json& weight = MemberOrNull(MemberOrNull(spec, "fairSharing"), "weight");
      !weight.is_null()) {
    Result<Quantity> w = QuantityFromJson(weight);
    if (!w) return refuse("spec.fairSharing.weight: " + w.error().message());
    queue.weight = static_cast<double>(w->milli()) / 1000.0;
  }
  queue.strategy = StringMemberOr(spec, "queueingStrategy") == "StrictFIFO"
                       ? scheduler::QueueingStrategy::kStrictFifo
                       : scheduler::QueueingStrategy::kBestEffortFifo;
  const json& preemption = MemberOrNull(spec, "preemption");
  queue.preempt_lower_priority =
      StringMemberOr(preemption, "withinClusterQueue", "Never") != "Never";
  queue.reclaim_within_cohort =
      StringMemberOr(preemption, "reclaimWithinCohort", "Never") != "Never";
  const json& groups = MemberOrNull(spec, "resourceGroups");
  if (groups.is_array() && groups.size() > 1) {
    return refuse("strata enforces one resource group per ClusterQueue, it has " +
                  std::to_string(groups.size()));
  }
  if (!groups.is_array() || groups.empty()) return queue;
  const json& group_flavors = MemberOrNull(groups[0], "flavors");
  for (size_t f = 0; group_flavors.is_array() && f < group_flavors.size(); ++f) {
    std::string name = StringMemberOr(group_flavors[f], "name");
    auto index = flavors.find(name);
    if (index == flavors.end()) return refuse("ResourceFlavor \"" + name + "\" does not exist");
    scheduler::FlavorQuota quota;
    quota.flavor = index->second;
    const json& resources = MemberOrNull(group_flavors[f], "resources");
    for (size_t r = 0; resources.is_array() && r < resources.size(); ++r) {
      std::string resource_name = StringMemberOr(resources[r], "name");
      std::optional<Resource> resource = QuotaResource(resource_name);
      if (!resource) {
        return refuse("strata enforces quota in cpu, memory and nvidia.com/gpu, not \"" +
                      resource_name + "\"");
      }
      std::string where = fmt::format("spec.resourceGroups[0].flavors[{}].resources[{}]", f, r);
      scheduler::ResourceQuota q;
      Result<int64_t> nominal = Amount(MemberOrNull(resources[r], "nominalQuota"), *resource);
      if (!nominal) return refuse(where + ".nominalQuota: " + nominal.error().message());
      q.nominal = *nominal;
      for (auto [field, limit] : {std::pair{"borrowingLimit", &q.borrowing_limit},
                                  std::pair{"lendingLimit", &q.lending_limit}}) {
        const json& value = MemberOrNull(resources[r], field);
        if (value.is_null()) continue;
        Result<int64_t> amount = Amount(value, *resource);
        if (!amount) return refuse(where + "." + field + ": " + amount.error().message());
        *limit = *amount;
      }
      quota.resources[static_cast<size_t>(*resource)] = q;
    }
    queue.flavors.push_back(quota);
  }
  return queue;
}

}  // namespace

std::optional<std::string> KueueQuotas::ClusterQueueFor(const std::string& namespace_name,
                                                        const std::string& local_queue) const {
  auto it = local_to_cluster.find(namespace_name + "/" + local_queue);
  if (it == local_to_cluster.end()) return std::nullopt;
  return it->second;
}

const scheduler::Queue* KueueQuotas::Find(const std::string& name) const {
  for (const scheduler::Queue& queue : queues)
    if (queue.name == name) return &queue;
  return nullptr;
}

int KueueQuotas::FlavorOf(const std::string& queue, const scheduler::Node& node) const {
  const scheduler::Queue* q = Find(queue);
  if (q == nullptr) return -1;
  for (const scheduler::FlavorQuota& quota : q->flavors) {
    const scheduler::Flavor& flavor = flavors.at(static_cast<size_t>(quota.flavor));
    bool matches = true;
    for (const auto& [key, value] : flavor.node_labels) {
      auto label = node.labels.find(key);
      matches = matches && label != node.labels.end() && label->second == value;
    }
    if (matches) return quota.flavor;
  }
  return -1;
}

std::string QuotaQuantity(Resource resource, int64_t amount) {
  if (resource == Resource::kMemory) {
    return Quantity::FromUnits(amount, Quantity::Format::kBinarySI).ToString();
  }
  return Quantity::FromMilli(amount).ToString();
}

KueueQuotas QuotasFromKueue(const KueueObjects& objects) {
  KueueQuotas out;
  std::map<std::string, int> flavor_index;
  for (const auto& [name, object] : objects.resource_flavors) {
    scheduler::Flavor flavor;
    flavor.name = name;
    const json& labels = MemberOrNull(MemberOrNull(object, "spec"), "nodeLabels");
    for (auto it = labels.begin(); labels.is_object() && it != labels.end(); ++it) {
      if (it.value().is_string()) flavor.node_labels.emplace(it.key(), it.value());
    }
    flavor_index[name] = static_cast<int>(out.flavors.size());
    out.flavors.push_back(std::move(flavor));
  }
  for (const auto& [name, object] : objects.cluster_queues) {
    Result<scheduler::Queue> queue = QueueFrom(object, flavor_index);
    if (queue) {
      out.queues.push_back(std::move(*queue));
    } else {
      out.invalid[name] = queue.error().message();
    }
  }
  for (const auto& [key, object] : objects.local_queues) {
    out.local_to_cluster[key] = StringMemberOr(MemberOrNull(object, "spec"), "clusterQueue");
  }
  for (const auto& [name, object] : objects.priority_classes) {
    const json& value = MemberOrNull(object, "value");
    if (value.is_number_integer()) {
      out.priority_classes[name] =
          static_cast<int>(std::clamp<int64_t>(value.get<int64_t>(), -2000000000, 2000000000));
    }
  }
  return out;
}

}  // namespace strata::kubesched
