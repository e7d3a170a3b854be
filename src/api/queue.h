#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/object_meta.h"
#include "api/workload.h"
#include "common/quantity.h"

namespace strata::api {

// Quota for one resource ("cpu", "memory", "gpu" in milli-GPUs, "gpuMemory") of one flavor.
// `borrowing_limit`: how much more than nominal the queue may borrow from its cohort (absent:
// unlimited). `lending_limit`: how much of its unused nominal quota it lends (absent: all).
struct ResourceQuota {
  std::string resource;
  Quantity nominal;
  std::optional<Quantity> borrowing_limit;
  std::optional<Quantity> lending_limit;

  bool operator==(const ResourceQuota&) const = default;
};

struct FlavorQuota {
  std::string flavor;  // a ResourceFlavor's name
  std::vector<ResourceQuota> resources;

  bool operator==(const FlavorQuota&) const = default;
};

// Whom an unplaceable workload of this queue may preempt. `within_queue`: Never |
// LowerPriority. `reclaim_within_cohort`: Never | LowerPriority | Any (workloads of other
// queues that borrow beyond their nominal quota).
struct QueuePreemption {
  std::string within_queue = "Never";
  std::string reclaim_within_cohort = "Never";

  bool operator==(const QueuePreemption&) const = default;
};

// A namespaced name by which workloads may refer to a queue (from a Kueue LocalQueue).
struct LocalQueueRef {
  std::string namespace_name;
  std::string name;

  bool operator==(const LocalQueueRef&) const = default;
};

struct QueueSpec {
  std::string cohort;  // queues with the same cohort lend each other unused quota
  std::vector<FlavorQuota> flavors;
  Quantity weight = Quantity::FromUnits(1);          // fair-share weight within the cohort
  std::string queueing_strategy = "BestEffortFIFO";  // or StrictFIFO
  QueuePreemption preemption;
  bool reclaimable = true;  // may others reclaim what this queue borrows
  std::vector<LocalQueueRef> local_queues;
  // The queue only holds quota its cohort lends and admits no workload: a Kueue Cohort's own
  // quota, which the cohort's queues borrow (a Cohort is stored as such a Queue of its name).
  bool lend_only = false;

  bool operator==(const QueueSpec&) const = default;
};

// One resource of one flavor of a queue: its nominal quota, what the queue's admitted
// workloads use, and how much of that use is borrowed from the cohort (use above nominal).
struct ResourceUsage {
  std::string resource;
  Quantity nominal;
  Quantity used;
  Quantity borrowed;

  bool operator==(const ResourceUsage&) const = default;
};

struct FlavorUsage {
  std::string flavor;  // empty for use charged to no flavor (a queue without flavors)
  std::vector<ResourceUsage> resources;

  bool operator==(const FlavorUsage&) const = default;
};

// What the scheduler adapter reports of a queue, computed by the scheduler's own charging rules
// (Kueue's ClusterQueue status): use per flavor and resource, and how many workloads are
// admitted and pending.
struct QueueStatus {
  std::vector<FlavorUsage> flavors_usage;
  int64_t admitted_workloads = 0;
  int64_t pending_workloads = 0;

  bool operator==(const QueueStatus&) const = default;
};

// A quota queue: workloads name it, and are admitted while their request fits its quota plus
// what its cohort lends. Cluster-scoped.
struct Queue {
  ObjectMeta metadata;
  QueueSpec spec;
  QueueStatus status;

  bool operator==(const Queue&) const = default;
};

struct ResourceFlavorSpec {
  std::map<std::string, std::string> node_labels;  // nodes of this flavor carry these labels
  std::vector<Toleration> tolerations;             // added to workloads admitted on this flavor

  bool operator==(const ResourceFlavorSpec&) const = default;
};

// A class of nodes (usually one GPU model) that quota is given in. Cluster-scoped.
struct ResourceFlavor {
  ObjectMeta metadata;
  ResourceFlavorSpec spec;

  bool operator==(const ResourceFlavor&) const = default;
};

}  // namespace strata::api
