#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "api/node.h"
#include "api/pod.h"
#include "api/torchrun_env.h"
#include "common/status.h"

// The virtual kubelet's device plugin for nvidia.com/gpu: whole GPUs of its node given to the
// pods strata did not make (foreign pods, node/foreign_pod.h) at admission, as the kubelet's
// device manager and NVIDIA's device plugin give them to containers.

namespace strata::node {

// The kubelet's reason for a pod whose devices could not be allocated at admission.
inline constexpr char kUnexpectedAdmissionError[] = "UnexpectedAdmissionError";
// strata's reason for a foreign pod that asks for a share of a GPU (HAMi's nvidia.com/gpumem,
// gpucores...): the agent has no allocator for shares of foreign pods.
inline constexpr char kGpuShareUnsupportedReason[] = "GpuShareUnsupported";

// Whether `gpu` can be given to a pod as one nvidia.com/gpu: its UUID not among `unhealthy`
// (UnhealthyGpuUuids of its node) and not in MIG mode (a MIG GPU's instances are resources of
// their own, as with the device plugin's mixed strategy).
bool AllocatableGpu(const api::NodeGpu& gpu, const std::set<std::string>& unhealthy);

// The UUIDs of the GPUs `node`'s api::kGpuHealthAnnotation says are unhealthy; none when it has
// none or it does not parse.
std::set<std::string> UnhealthyGpuUuids(const api::Node& node);

// The resourceID of `gpu` in a pod's allocatedResourcesStatus: its UUID, or its index in
// decimal when the inventory knows no UUID (the device plugin's index device IDs).
std::string GpuResourceId(const api::NodeGpu& gpu);

// What api::kAllocatedGpusAnnotation holds for the GPUs `indices` of `node`: a JSON array of
// {"resourceID", "health"} (v1 ResourceHealth: "Healthy", "Unhealthy", or "Unknown" for an index
// the node no longer lists), in the order of `indices`.
std::string AllocatedGpusAnnotation(const api::Node& node, const std::vector<int64_t>& indices);

// The indices of `node`'s GPUs named by an api::kAllocatedGpusAnnotation value. InvalidArgument
// when it does not parse or names a GPU `node` does not have.
Result<std::vector<int64_t>> ParseAllocatedGpus(const api::Node& node, const std::string& text);

// The variables that say which GPUs a foreign pod's processes see, as the device plugin sets
// them for a container: CUDA_VISIBLE_DEVICES (the indices of `indices`, "0,1"; empty: none) and
// NVIDIA_VISIBLE_DEVICES (their resource IDs, GpuResourceId; "void" for none).
api::Environment GpuVisibilityEnv(const api::Node* node, const std::vector<int64_t>& indices);

// Picks `count` (>= 1) whole GPUs of `node` among the allocatable ones (AllocatableGpu) not in
// `held`: the fewest NVLink islands that hold them (one island when one has room; among those
// the one with the least room left, so that bigger islands stay whole for bigger pods), then
// the lowest indices. Returned in ascending order. On failure FailedPrecondition whose message
// is the kubelet's (admission's "Allocate failed due to ..., which is unexpected" around the
// device manager's words): "requested number of devices unavailable for nvidia.com/gpu.
// Requested: N, Available: M", "no healthy devices present; cannot allocate unhealthy devices
// nvidia.com/gpu", or "cannot allocate unregistered device nvidia.com/gpu" for a node without
// GPUs.
Result<std::vector<int64_t>> PickGpus(const api::Node& node, const std::set<int64_t>& held,
                                      int64_t count);

// How many whole GPUs a foreign pod's container asks for (its nvidia.com/gpu). InvalidArgument
// for a share (a non-integer count, or a GPU memory request): what the agent cannot give.
Result<int64_t> RequestedGpus(const api::Pod& pod);

// The GPUs foreign pods on this agent's nodes hold, by pod uid, and their allocation.
//
// A pod's GPUs are allocated once, at admission, and kept until it ends or leaves the store:
// across restarts of its container in place, and, through Restore, across restarts of the
// agent. Owned by the node agent; not thread-safe (one pass at a time).
class GpuAllocator {
 public:
  // The GPUs of `node` that pod `uid` holds, or nullptr.
  const std::vector<int64_t>* HeldBy(const std::string& uid) const;

  // Records that `uid` holds `indices` of `node` (what a restarted agent learns from a pod's
  // processes or its status). Replaces what it held.
  void Restore(const std::string& uid, const std::string& node, std::vector<int64_t> indices);

  // The GPUs of pod `uid` on `node`: those it holds, else `count` picked by PickGpus among the
  // GPUs no other pod here holds and none of `also_held` (what strata's own pods on the node
  // were assigned), recorded as its. Count 0 holds nothing. Errors as PickGpus.
  Result<std::vector<int64_t>> Allocate(const std::string& uid, const api::Node& node,
                                        int64_t count, const std::set<int64_t>& also_held);

  // Frees what `uid` holds.
  void Release(const std::string& uid);

  // Frees what every pod not in `live` holds.
  void Retain(const std::set<std::string>& live);

 private:
  struct Holding {
    std::string node;
    std::vector<int64_t> indices;
  };
  std::map<std::string, Holding> held_;
};

}  // namespace strata::node
