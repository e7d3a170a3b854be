#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "scheduler/model.h"

// What strata writes into a Kueue ClusterQueue's status when it enforces the queue's quota, in
// Kueue's own shape, so that `kubectl get clusterqueues` and `kubectl describe clusterqueue`
// show the use and the waiting workloads as with Kueue's controller.

namespace strata::kubesched {

// One ClusterQueue's figures from a scheduling cycle.
struct QueueFigures {
  std::map<int, scheduler::ResourceVector> used_by_flavor;  // flavor index -> amounts charged
  int64_t admitted_workloads = 0;  // bound pods and gangs charged to the queue
  int64_t pending_workloads = 0;   // waiting pods and gangs that name it
};

// The status (without lastTransitionTime) of ClusterQueue `name`: flavorsReservation and
// flavorsUsage per flavor of the queue and per resource it gives quota in (total, and what is
// borrowed: the use above nominal), pendingWorkloads, reservingWorkloads, admittedWorkloads, and
// the Active condition (True "Ready", or False with strata's reason when it cannot enforce the
// queue: `queue` is null then). `flavors`: the cluster's.
nlohmann::json ClusterQueueStatus(const scheduler::Queue* queue, const std::string& unusable,
                                  const std::vector<scheduler::Flavor>& flavors,
                                  const QueueFigures& figures);

// `status` with the Active condition's lastTransitionTime: `now`, unless `previous` (the status
// last written) had the same condition status, whose time it keeps.
nlohmann::json WithTransitionTime(nlohmann::json status, const nlohmann::json& previous,
                                  TimePoint now);

}  // namespace strata::kubesched
