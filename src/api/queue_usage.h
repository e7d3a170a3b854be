#pragma once

#include <map>
#include <string>

#include "api/queue.h"
#include "common/quantity.h"

namespace strata::api {

// One resource of one queue, summed over its flavors: its nominal quota, what its admitted
// workloads use (the Queue's status, which the scheduler adapter writes by the scheduler's own
// charging rules) and what of that is borrowed from the cohort.
struct QueueResourceUsage {
  Quantity nominal;
  Quantity used;
  Quantity borrowed;

  bool operator==(const QueueResourceUsage&) const = default;
};

// A queue's use by resource name as queues spell them ("gpu", "cpu", "memory", "gpuMemory"):
// every resource it has a quota for or its status reports.
std::map<std::string, QueueResourceUsage> UsageByResource(const api::Queue& queue);

}  // namespace strata::api
