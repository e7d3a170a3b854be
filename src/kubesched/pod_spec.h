#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "kubesched/dynamic_resources.h"
#include "scheduler/model.h"

// A v1 Pod as strata's scheduler sees it: what it asks for, where it may go, which gang it
// belongs to, and where it is.

namespace strata::kubesched {

// The amounts of a v1 ResourceList that placement reads.
struct ResourceList {
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  int64_t gpus = 0;            // nvidia.com/gpu
  int64_t gpu_memory_mib = 0;  // HAMi's nvidia.com/gpumem (per GPU, MiB)
  int64_t gpu_cores = 0;       // HAMi's nvidia.com/gpucores (per GPU, percent)
};

// Reads cpu, memory and the GPU resources of `list` (a v1 ResourceList); other resources are
// ignored. InvalidArgument "<where>.<resource>: ..." when a quantity does not parse.
Result<ResourceList> ReadResourceList(const nlohmann::json& list, const std::string& where);

// The gang labels strata reads (DESIGN.md, Kubernetes mode).
inline constexpr const char* kKueuePodGroupLabel = "kueue.x-k8s.io/pod-group-name";
inline constexpr const char* kKueuePodGroupTotalAnnotation = "kueue.x-k8s.io/pod-group-total-count";
inline constexpr const char* kVolcanoGroupAnnotation = "scheduling.k8s.io/group-name";
inline constexpr const char* kVolcanoOwnGroupAnnotation = "scheduling.volcano.sh/group-name";
inline constexpr const char* kLwsGroupKeyLabel = "leaderworkerset.sigs.k8s.io/group-key";
inline constexpr const char* kLwsSizeAnnotation = "leaderworkerset.sigs.k8s.io/size";
inline constexpr const char* kRequiredTopologyAnnotation =
    "kueue.x-k8s.io/podset-required-topology";
inline constexpr const char* kPreferredTopologyAnnotation =
    "kueue.x-k8s.io/podset-preferred-topology";

// Where a gang's size and placement come from: the pod's own labels and annotations, or a group
// object that the pod names (pod_groups.h).
enum class GroupSource { kLabels, kPodGroup, kVolcanoPodGroup, kJobSet, kJob };

// Which gang a pod belongs to: pods with the same namespace and key are placed together, all
// `size` of them or none. An empty key: the pod is its own workload.
struct GangKey {
  // "podgroup/<name>" (spec.schedulingGroup.podGroupName), "kueue/<name>", "lws/<group-key>",
  // "volcano/<name>", "jobset/<jobset>/<replicated job>", "job/<name>" (the owning Job, whose
  // Kueue queue label makes it one workload: owner_jobs.h).
  std::string key;
  // From the labels; for a group object, 0 here: its policy decides (GroupPolicy); for a
  // JobSet's replicated job, its Jobs (each Job's pods come from the Job).
  int64_t size = 1;
  GroupSource source = GroupSource::kLabels;
  // The group object's name (kPodGroup, kVolcanoPodGroup); the owning Job's (kJobSet, kJob).
  std::string group_name;
};

struct PodSpec {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string scheduler_name;  // spec.schedulerName, "default-scheduler" when unset
  std::string node_name;       // spec.nodeName: bound when set
  std::string phase;           // status.phase
  bool deleting = false;       // metadata.deletionTimestamp is set
  bool gated = false;          // spec.schedulingGates is not empty: no scheduler may place it
  int priority = 0;            // spec.priority (admission fills it from priorityClassName)
  TimePoint created{};
  TimePoint started{};  // status.startTime, or creation when unset
  // What one pod takes: containers' requests summed, the largest init container's where that
  // is larger, plus spec.overhead (kube-scheduler's rule). count is 1.
  scheduler::PodSet pod_set;
  GangKey gang;
  std::string queue_name;  // the kueue.x-k8s.io/queue-name label: a LocalQueue of its namespace
  std::string workload_priority_class;  // the kueue.x-k8s.io/priority-class label
  std::string owner_job;                // the batch/v1 Job that controls it, "" for none
  scheduler::TopologyRequest topology;  // from Kueue's podset topology annotations
  std::vector<PodClaimRef> claims;      // its DRA ResourceClaims (dynamic_resources.h)
  // The PodScheduled condition's status and message as stored ("" when absent).
  std::string scheduled_status;
  std::string scheduled_message;

  // Holds capacity on its node: bound and neither Succeeded nor Failed.
  bool HoldsCapacity() const {
    return !node_name.empty() && phase != "Succeeded" && phase != "Failed";
  }
  // Waits for a scheduler: not bound, not gated, not deleting, not terminal.
  bool Pending() const {
    return node_name.empty() && !gated && !deleting && phase != "Succeeded" && phase != "Failed";
  }
};

// Decodes a v1 Pod. InvalidArgument naming the pod and the field when a quantity, a
// toleration or an affinity term does not convert; fields placement does not read are ignored.
Result<PodSpec> PodFromKube(const nlohmann::json& pod);

}  // namespace strata::kubesched
