#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/queue_names.h"
#include "common/quantity.h"

namespace strata::server {

// One resource of one queue: its nominal quota (summed over the queue's flavors), what the
// queue's live pods use, and how much of that use is borrowed from the cohort (use above the
// nominal quota).
struct ResourceUsage {
  Quantity nominal;
  Quantity used;
  Quantity borrowed;

  bool operator==(const ResourceUsage&) const = default;
};

// A queue's quota use, by resource name as queues spell them ("gpu", "cpu", "memory",
// "gpuMemory"): every resource the queue has a quota for, and every resource its pods request.
struct QueueUsage {
  std::string name;
  std::string cohort;
  std::map<std::string, ResourceUsage> resources;
};

// The queue names of `queues` as the REST API serves them (JSON), for api::QueueNames's rule of
// which Queue a workload's `queue` field names. Fields that do not parse are skipped.
api::QueueNames QueueNamesOf(const std::vector<nlohmann::json>& queues);

// Computes every queue's use from the queues and the pods as the REST API serves them (JSON).
// A pod counts while it is bound to a node (spec.nodeName) and not Succeeded or Failed, charged
// what it requests (spec.resources) to the queue its spec.queue names, directly or through one
// of the queue's localQueues in the pod's namespace. Pods of no known queue are not counted.
// Fields that do not parse count as zero: what is stored was validated when it was written.
// Queues come back in the order given. Pure; thread-safe.
std::vector<QueueUsage> ComputeQueueUsage(const std::vector<nlohmann::json>& queues,
                                          const std::vector<nlohmann::json>& pods);

}  // namespace strata::server
