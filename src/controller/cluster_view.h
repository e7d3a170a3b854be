#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/job.h"
#include "api/node.h"
#include "api/pod.h"
#include "common/clock.h"
#include "common/status.h"
#include "controller/stored_objects.h"
#include "scheduler/model.h"
#include "store/store.h"

namespace strata::controller {

struct ClusterViewOptions {
  // Node label keys that are topology levels, outermost first. A job's topology level "nvlink"
  // or "kubernetes.io/hostname" means one node.
  std::vector<std::string> topology_levels = {"topology.strata.dev/block",
                                              "topology.strata.dev/rack"};
};

// The objects a scheduler workload stands for. A Job's workload: the job and its live pods
// (none while pending). Pods scheduled without a Job (a standalone pod, a Volcano gang, a
// Service replica's group): those pods.
struct WorkloadObjects {
  std::optional<Stored<api::Job>> job;
  std::vector<Stored<api::Pod>> pods;
};

// What the scheduler adapter reads from the store for one cycle: the scheduler's Snapshot and
// pending workloads, and the way back from scheduler names and indices to stored objects.
// A plain value built by ReadClusterView.
struct ClusterView {
  scheduler::Snapshot snapshot;
  std::vector<scheduler::Workload> pending;
  // Workloads that cannot go to the scheduler (a field that does not convert, an incomplete
  // gang), explained like the scheduler's pending ones.
  std::vector<scheduler::Pending> held;
  std::vector<Stored<api::Node>> nodes;              // index = scheduler node index
  std::vector<std::string> flavors;                  // index = scheduler flavor index
  std::map<std::string, WorkloadObjects> workloads;  // by workload name, pending and running
  std::set<std::string> mig_instances_in_use;        // MIG instance UUIDs held by live pods
  std::set<std::pair<std::string, int>> master_ports_in_use;  // (address, port) of live jobs
};

// Workload names: "Job/<ns>/<name>", "Pod/<ns>/<name>", "PodGroup/<ns>/<gang>",
// "ServiceReplica/<ns>/<service>/<replica>".
std::string JobWorkloadName(const api::Job& job);

// Reads nodes, queues, flavors, jobs and pods into a ClusterView at `now`. Workloads named in
// `nominated` are marked so (their victims are being evicted). Pending: jobs that are not
// finished and have no pods, and pods not yet bound. Running: bound pods that are not terminal,
// grouped by workload; they hold capacity until terminal, also while being stopped. A node
// whose Ready condition is not True gets kube's node.kubernetes.io/not-ready taint. Returns the
// store's error, or the first stored object that does not decode.
Result<ClusterView> ReadClusterView(const store::Store& store, const ClusterViewOptions& options,
                                    const std::set<std::string>& nominated, TimePoint now);

}  // namespace strata::controller
