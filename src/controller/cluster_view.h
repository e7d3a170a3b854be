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
#include "api/pod_contract.h"
#include "cluster/cache.h"
#include "common/clock.h"
#include "common/status.h"
#include "scheduler/model.h"

namespace strata::controller {

struct ClusterViewOptions {
  // Node label keys that are topology levels, outermost first. A job's topology level "nvlink"
  // or "kubernetes.io/hostname" means one node.
  std::vector<std::string> topology_levels = {"topology.strata.dev/block",
                                              "topology.strata.dev/rack"};
};

// The objects a scheduler workload stands for. A Job's workload: the job and its pods (none
// while pending). Pods scheduled without a Job (a standalone pod, a Volcano gang, a Service
// replica's group): those pods.
struct WorkloadObjects {
  cluster::ObjectRef job;  // null for pod groups
  std::vector<cluster::ObjectRef> pods;
};

// A bind that a crash left half done, found while reading: its decision is recorded (a Job's
// placement, a gang's kGangPlacementAnnotation) and some of its pods are missing or unbound.
// The adapter finishes it before anything else.
struct UnfinishedBind {
  // A Job whose placement names ranks that have no pod: create them.
  cluster::ObjectRef job;
  std::vector<api::JobPodAssignment> missing;
  // A gang whose record names members not yet bound: bind them as it says, with what the
  // member that carries the record was bound with (flavor, leader address, bind time).
  cluster::ObjectRef recorder;
  std::vector<std::pair<cluster::ObjectRef, api::GangMember>> unbound;
};

// What the scheduler adapter reads for one cycle: the scheduler's Snapshot and pending
// workloads, and the way back from scheduler names and indices to stored objects. A plain value
// built by ReadClusterView; the objects it points to are the cache's, shared and immutable.
struct ClusterView {
  scheduler::Snapshot snapshot;
  std::vector<scheduler::Workload> pending;
  // Workloads that cannot go to the scheduler (a field that does not convert, an incomplete
  // gang), explained like the scheduler's pending ones.
  std::vector<scheduler::Pending> held;
  std::vector<cluster::ObjectRef> nodes;             // index = scheduler node index
  std::vector<std::string> flavors;                  // index = scheduler flavor index
  std::vector<cluster::ObjectRef> queues;            // the Queues that convert
  std::map<std::string, WorkloadObjects> workloads;  // by workload name, pending and running
  std::set<std::string> mig_instances_in_use;        // MIG instance UUIDs held by live pods
  std::set<std::pair<std::string, int>> master_ports_in_use;  // (address, port) of live jobs
  std::vector<UnfinishedBind> unfinished;
};

// Workload names: "Job/<ns>/<name>", "Pod/<ns>/<name>", "PodGroup/<ns>/<gang>",
// "ServiceReplica/<ns>/<service>/<replica>".
std::string JobWorkloadName(const api::Job& job);

// The scheduler's view of a node: its labels, taints (with node.kubernetes.io/not-ready when
// its Ready condition is not True), capacity and GPUs. Heartbeats do not change it.
scheduler::Node ConvertNode(const api::Node& node);

// Reads nodes, queues, flavors, jobs and pods from the cache into a ClusterView at `now`.
// Workloads named in `nominated` are marked so (their victims are being evicted).
//  - Running: a Job with a placement holds what its placement names (its live pods, and the
//    ranks whose pods are not created yet); a group of live bound pods holds what they hold,
//    plus the members its gang record names that are not bound yet. Capacity is held until
//    terminal, also while being stopped.
//  - Pending: jobs that are not finished, have no placement and no pods (a run given up is gone
//    first), and pods not yet bound, grouped into their gangs (a service replica's gang is its
//    group size).
// A node whose Ready condition is not True gets kube's node.kubernetes.io/not-ready taint.
// Objects that do not decode are left out (the cache keeps them with their error).
ClusterView ReadClusterView(const cluster::Cache& cache, const ClusterViewOptions& options,
                            const std::set<std::string>& nominated, TimePoint now);

}  // namespace strata::controller
