#include "api/queue_usage.h"

namespace strata::api {

std::map<std::string, QueueResourceUsage> UsageByResource(const api::Queue& queue) {
  std::map<std::string, QueueResourceUsage> usage;
  for (const api::FlavorQuota& flavor : queue.spec.flavors) {
    for (const api::ResourceQuota& quota : flavor.resources) {
      usage[quota.resource].nominal += quota.nominal;
    }
  }
  for (const api::FlavorUsage& flavor : queue.status.flavors_usage) {
    for (const api::ResourceUsage& resource : flavor.resources) {
      QueueResourceUsage& entry = usage[resource.resource];
      entry.used += resource.used;
      entry.borrowed += resource.borrowed;
    }
  }
  return usage;
}

}  // namespace strata::api
