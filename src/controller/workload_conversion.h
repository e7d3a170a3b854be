#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/job.h"
#include "api/node.h"
#include "api/pod.h"
#include "api/pod_contract.h"
#include "api/queue_names.h"
#include "cluster/cache.h"
#include "scheduler/model.h"

// How the store's objects become the scheduler's model: nodes, queues and flavors, and one
// workload's Job and pods. Pure functions over the cache's shared objects; thread-safe. The
// scheduler adapter's reader (cluster_view.h) calls them for what changed.
namespace strata::controller {

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
  // A Job whose placement names ranks that have no pod, of roles that may start (the roles
  // they depend on are Ready or Complete): create them.
  cluster::ObjectRef job;
  std::vector<api::JobPodAssignment> missing;
  // A gang whose record names members not yet bound: bind them as it says, with what the
  // member that carries the record was bound with (flavor, leader address, bind time).
  cluster::ObjectRef recorder;
  std::vector<std::pair<cluster::ObjectRef, api::GangMember>> unbound;
};

// Workload names: "Job/<ns>/<name>", "Pod/<ns>/<name>", "PodGroup/<ns>/<gang>",
// "ServiceReplica/<ns>/<service>/<replica>".
std::string JobWorkloadName(const api::Job& job);
// The workload a pod belongs to: its Job's, else its gang's, its service replica's or its own.
std::string PodWorkloadName(const api::Pod& pod);

// The scheduler's view of a node: its labels, taints (with node.kubernetes.io/not-ready when
// its Ready condition is not True), capacity and GPUs. Heartbeats do not change it.
scheduler::Node ConvertNode(const api::Node& node);

// Queues and flavors as the scheduler sees them, with what in them does not convert, by queue
// name.
struct QuotaModel {
  api::QueueNames names;
  std::map<std::string, int> flavor_index;           // by flavor name
  std::map<std::string, std::string> queue_errors;   // a queue that does not convert: why
  std::vector<scheduler::Flavor> scheduler_flavors;  // Cluster::flavors
  std::vector<scheduler::Queue> scheduler_queues;    // Cluster::queues
  std::vector<cluster::ObjectRef> converted;         // the Queues that convert
};

// Converts the decodable `queues` and `flavors` (in the cache's order).
QuotaModel ConvertQuota(const std::vector<cluster::ObjectRef>& queues,
                        const std::vector<cluster::ObjectRef>& flavors);

// What converting one workload needs of the rest of the cluster.
struct WorkloadContext {
  const std::map<std::string, int>& node_index;  // scheduler node index by node name
  const QuotaModel& quota;
};

// One workload's objects as the scheduler sees them.
struct WorkloadRead {
  // It holds capacity: a Job with a placement holds what its placement names (its live pods,
  // and the ranks whose pods are not created yet); a group of live bound pods holds what they
  // hold, plus the members its gang record names that are not bound yet. Capacity is held until
  // terminal, also while being stopped. A pod on a node that is gone holds nothing.
  std::optional<scheduler::RunningWorkload> running;
  // It waits: a job that is not finished, has no placement and no pods (a run given up is gone
  // first), or pods not yet bound, grouped into their gang (a service replica's gang is its
  // group size). `nominated` is left false.
  std::optional<scheduler::Workload> pending;
  // It waits but cannot go to the scheduler (a field that does not convert, an incomplete
  // gang), explained like the scheduler's pending ones.
  std::optional<scheduler::Pending> held;
  // The objects of what it is now: those of its pending or held part, else of its running one.
  std::optional<WorkloadObjects> objects;
  std::vector<UnfinishedBind> unfinished;
  std::vector<std::string> mig_instances;                 // held by its live pods
  std::vector<std::pair<std::string, int>> master_ports;  // (address, port) of its live pods
};

// Converts workload `name` from its Job (null when none, or it does not decode) and its
// decodable pods (in key order).
WorkloadRead ReadWorkload(const std::string& name, const cluster::ObjectRef& job,
                          const std::vector<cluster::ObjectRef>& pods,
                          const WorkloadContext& context);

}  // namespace strata::controller
