#pragma once

#include <string>
#include <vector>

#include "api/pod.h"
#include "common/status.h"
#include "store/store.h"

namespace strata::node {

// The kubelet's part of a pod's environment: valueFrom (configMapKeyRef, secretKeyRef, fieldRef,
// resourceFieldRef) and envFrom, read when the pod's processes start, on the node. The values are
// handed to the processes only; a Secret's value never enters the stored pod. Pure but for the
// store reads; thread-compatible.

// The reason a pod whose environment cannot be resolved yet is kept Pending with, as Kubernetes
// names it; the node agent retries on every pass until what it reads appears.
inline constexpr char kCreateContainerConfigError[] = "CreateContainerConfigError";

// Where the pod runs: fieldRef status.podIP and status.hostIP, and the node's capacity, which
// resourceFieldRef limits.cpu and limits.memory read when the pod sets neither a limit nor a
// request (Kubernetes: the node's allocatable; strata reserves nothing on a node).
struct PodPlacement {
  std::string pod_ip;
  std::string host_ip;
  Quantity node_cpu;
  Quantity node_memory;
};

// The pod's variables with their values, in Kubernetes' order: every envFrom source in turn
// (prefix + each key, in key order), then each env item, a later name replacing an earlier one.
// A literal value has its `$(NAME)` references to variables defined before it expanded (`$$` is
// `$`), as Kubernetes does; a value read from valueFrom is taken as it is. The ConfigMaps and
// Secrets are read from `store` in the pod's namespace (a Secret's and a binaryData value's
// bytes as they are).
// Returns FailedPrecondition naming what is missing when a ConfigMap, a Secret or a key that is
// not optional is not there ("secret \"hf-token\" not found", "couldn't find key token in Secret
// default/hf-token"), or when envFrom would set a name strata reserves; the store's error when a
// read fails otherwise.
Result<std::vector<api::EnvVar>> ResolvePodEnvironment(const api::Pod& pod,
                                                       const PodPlacement& placement,
                                                       store::Store& store);

}  // namespace strata::node
