#include "kubesched/queue_status.h"

#include <algorithm>
#include <string>

#include "kubesched/kueue_quotas.h"

namespace strata::kubesched {

using nlohmann::json;
using scheduler::Resource;

json ClusterQueueStatus(const scheduler::Queue* queue, const std::string& unusable,
                        const std::vector<scheduler::Flavor>& flavors,
                        const QueueFigures& figures) {
  json usage = json::array();
  if (queue != nullptr) {
    for (const scheduler::FlavorQuota& quota : queue->flavors) {
      json resources = json::array();
      auto used = figures.used_by_flavor.find(quota.flavor);
      for (Resource resource : kQuotaResources) {
        const auto& limit = quota.resources[static_cast<size_t>(resource)];
        if (!limit) continue;
        int64_t total = used == figures.used_by_flavor.end()
                            ? 0
                            : used->second.amount[static_cast<size_t>(resource)];
        resources.push_back(
            {{"name", scheduler::ResourceName(resource)},
             {"total", QuotaQuantity(resource, total)},
             {"borrowed", QuotaQuantity(resource, std::max<int64_t>(0, total - limit->nominal))}});
      }
      usage.push_back({{"name", flavors.at(static_cast<size_t>(quota.flavor)).name},
                       {"resources", std::move(resources)}});
    }
  }
  json condition = queue != nullptr
                       ? json{{"type", "Active"},
                              {"status", "True"},
                              {"reason", "Ready"},
                              {"message", "Can admit new workloads (quota enforced by strata)"}}
                       : json{{"type", "Active"},
                              {"status", "False"},
                              {"reason", "NotEnforceable"},
                              {"message", "strata cannot enforce this queue: " + unusable}};
  // strata admits and binds in one step: what a workload reserves is what it is admitted with.
  return {{"flavorsReservation", usage},
          {"flavorsUsage", usage},
          {"pendingWorkloads", figures.pending_workloads},
          {"reservingWorkloads", figures.admitted_workloads},
          {"admittedWorkloads", figures.admitted_workloads},
          {"conditions", json::array({std::move(condition)})}};
}

json WithTransitionTime(json status, const json& previous, TimePoint now) {
  json& condition = status["conditions"][0];
  std::string time = FormatRfc3339(now);
  if (previous.is_object() && previous.contains("conditions") &&
      previous["conditions"].is_array() && !previous["conditions"].empty()) {
    const json& before = previous["conditions"][0];
    if (before.value("status", "") == condition.value("status", "")) {
      time = before.value("lastTransitionTime", time);
    }
  }
  condition["lastTransitionTime"] = time;
  return status;
}

}  // namespace strata::kubesched
