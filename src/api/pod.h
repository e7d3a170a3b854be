#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object_meta.h"
#include "api/workload.h"

namespace strata::api {

// The workload a pod belongs to: a Job (replica = node rank) or a Service (replica index, rank
// within the replica's group). Empty kind: a standalone pod. `uid` is the owner's, so that the
// pod names its controller as Kubernetes' ownerReferences do (empty for pods made before it was
// recorded).
struct PodOwner {
  std::string kind;
  std::string name;
  int64_t replica = 0;
  int64_t rank = 0;
  std::string uid;

  bool operator==(const PodOwner&) const = default;
};

// A GPU (or a share of one) bound to the pod.
struct AssignedGpu {
  int64_t index = 0;
  std::string uuid;
  Quantity share = Quantity::FromUnits(1);  // milli-GPUs of this GPU
  Quantity memory;                          // GPU memory reserved, for fractional shares
  std::string mig_instance;                 // MIG instance UUID

  bool operator==(const AssignedGpu&) const = default;
};

// Membership of an all-or-nothing group of standalone pods (from a Volcano PodGroup).
struct PodGang {
  std::string name;  // empty: not in a gang
  int64_t min_member = 0;
  std::map<std::string, Quantity> min_resources;

  bool operator==(const PodGang&) const = default;
};

struct PodSpec {
  PodOwner owner;
  std::string queue;
  int64_t priority = 0;
  std::string restart_policy = "Always";  // Always | OnFailure | Never
  std::string node_name;                  // set when bound
  ResourceRequest resources;
  GpuSelector gpu_selector;
  std::map<std::string, std::string> node_selector;  // node labels the pod's node must carry
  std::vector<Toleration> tolerations;
  ProcessTemplate template_;
  std::vector<AssignedGpu> assigned_gpus;  // set when bound
  PodGang gang;

  bool operator==(const PodSpec&) const = default;
};

// Where a pod's processes stand (Kubernetes' pod phases).
enum class PodPhase { kPending, kRunning, kSucceeded, kFailed };

// "Pending", "Running", "Succeeded", "Failed".
std::string_view PodPhaseName(PodPhase phase);
// The phase named `name`; nullopt for any other word.
std::optional<PodPhase> ParsePodPhase(std::string_view name);

struct PodStatus {
  PodPhase phase = PodPhase::kPending;
  std::optional<int64_t> exit_code;
  int64_t restart_count = 0;
  std::string reason;
  std::string message;
  // The address the pod's processes are reached at: its node's (pods share their node's
  // network), set by the node agent when it starts them; empty until then, or when the node is
  // known by name only.
  std::string pod_ip;

  bool operator==(const PodStatus&) const = default;
};

// The one container of a pod's v1 Pod on Kubernetes (kubestore's mapping), the name `kubectl
// logs` asks for: the pod's processes run in it.
inline constexpr std::string_view kPodContainerName = "main";

// The unit that is placed on one node and runs processes there. Namespaced.
struct Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;

  bool operator==(const Pod&) const = default;
};

}  // namespace strata::api
