#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kube/resource.h"
#include "scheduler/model.h"

// Kueue's quota objects (kueue.x-k8s.io/v1beta2) as the scheduler's queues: strata enforces the
// ClusterQueues' quotas itself, in place of Kueue's controller, for the pods it schedules.

namespace strata::kubesched {

namespace kueue_resources {
inline const kube::GroupVersionResource kClusterQueues{"kueue.x-k8s.io", "v1beta2",
                                                       "clusterqueues"};
inline const kube::GroupVersionResource kLocalQueues{"kueue.x-k8s.io", "v1beta2", "localqueues"};
inline const kube::GroupVersionResource kResourceFlavors{"kueue.x-k8s.io", "v1beta2",
                                                         "resourceflavors"};
inline const kube::GroupVersionResource kWorkloadPriorityClasses{"kueue.x-k8s.io", "v1beta2",
                                                                 "workloadpriorityclasses"};
}  // namespace kueue_resources

// The resources strata enforces Kueue quota in, named as Kubernetes names them
// (scheduler::ResourceName); their amounts are in the scheduler's units (milli-CPUs, bytes,
// milli-GPUs).
inline constexpr scheduler::Resource kQuotaResources[] = {
    scheduler::Resource::kCpu, scheduler::Resource::kMemory, scheduler::Resource::kGpu};

// An amount of one of kQuotaResources as a Kubernetes quantity: "1500m", "16Gi", "6".
std::string QuotaQuantity(scheduler::Resource resource, int64_t amount);

// The label by which a pod names the LocalQueue of its namespace that admits it.
inline constexpr const char* kKueueQueueNameLabel = "kueue.x-k8s.io/queue-name";
// The label by which a pod names the WorkloadPriorityClass that gives its workload's priority
// in the queues (Kueue's, independent of the pod's own PriorityClass).
inline constexpr const char* kKueuePriorityClassLabel = "kueue.x-k8s.io/priority-class";

// The ClusterQueues, LocalQueues, ResourceFlavors and WorkloadPriorityClasses last seen, by name
// ("namespace/name" for LocalQueues), as the API returned them.
struct KueueObjects {
  std::map<std::string, nlohmann::json> cluster_queues;
  std::map<std::string, nlohmann::json> local_queues;
  std::map<std::string, nlohmann::json> resource_flavors;
  std::map<std::string, nlohmann::json> priority_classes;
};

// The scheduler's flavors and queues made of KueueObjects. Every ResourceFlavor becomes a
// Flavor (nodeLabels); every ClusterQueue a Queue: cohortName, fairSharing.weight,
// queueingStrategy, preemption (withinClusterQueue, reclaimWithinCohort), and one resource
// group's flavors in order with their nominal quotas, borrowing and lending limits in cpu,
// memory and nvidia.com/gpu. A ClusterQueue strata cannot enforce as Kueue would (several
// resource groups, another resource, a stop policy, a flavor that does not exist) is not made
// a Queue: its pods wait, told why in `invalid`.
struct KueueQuotas {
  std::vector<scheduler::Flavor> flavors;
  std::vector<scheduler::Queue> queues;
  std::map<std::string, std::string> invalid;  // ClusterQueue name -> why strata cannot use it

  // The Queue made of ClusterQueue `name`, or null (it does not exist, or strata cannot use it).
  const scheduler::Queue* Find(const std::string& name) const;
  // The ClusterQueue a pod of `namespace_name` reaches through its LocalQueue `local_queue`,
  // or nullopt when that LocalQueue does not exist.
  std::optional<std::string> ClusterQueueFor(const std::string& namespace_name,
                                             const std::string& local_queue) const;
  // The first flavor of `queue` whose node labels `node` carries, or -1: where a bound pod's
  // use is charged.
  int FlavorOf(const std::string& queue, const scheduler::Node& node) const;

  std::map<std::string, std::string> local_to_cluster;  // "namespace/name" -> ClusterQueue
  std::map<std::string, int> priority_classes;          // WorkloadPriorityClass -> value
};

KueueQuotas QuotasFromKueue(const KueueObjects& objects);

}  // namespace strata::kubesched
