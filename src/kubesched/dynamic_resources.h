#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "kube/resource.h"
#include "kubesched/device_selector.h"
#include "scheduler/model.h"

// Dynamic Resource Allocation (resource.k8s.io/v1) for strata's scheduler: GPUs that a DRA
// driver publishes in ResourceSlices, claimed by pods through ResourceClaims, allocated by strata
// as kube-scheduler's DynamicResources plugin allocates them (the allocation and the pod's
// reservation written into the claim's status, the claim's delete-protection finalizer added,
// before the pod is bound). The GPUs of a node that has slices of the GPU driver are its devices,
// so that gangs, quotas and NVLink islands see them as any other GPUs.
//
// Supported: node-local slices (spec.nodeName; the newest generation of each pool); requests
// `exactly` a count of devices of a DeviceClass, with CEL selectors (device_selector.h) on the
// class and the request; one `matchAttribute` constraint per claim (all the named requests'
// devices share the attribute's value: one NVLink island, one PCIe root); claims shared by
// several pods; claims made from a pod's ResourceClaimTemplates (their names from the pod's
// status.resourceClaimStatuses). Not supported, and said so on the pods that ask: firstAvailable,
// allocationMode All, adminAccess, capacity requests, distinctAttribute, more than one
// constraint, devices of another driver than the GPU driver, slices for several nodes. Tainted
// devices are never allocated.

namespace strata::kubesched {

namespace dra_resources {
inline const kube::GroupVersionResource kResourceSlices{"resource.k8s.io", "v1", "resourceslices"};
inline const kube::GroupVersionResource kResourceClaims{"resource.k8s.io", "v1", "resourceclaims"};
inline const kube::GroupVersionResource kDeviceClasses{"resource.k8s.io", "v1", "deviceclasses"};
}  // namespace dra_resources

// The finalizer that keeps an allocated claim until it is deallocated (kube-controller-manager's
// resourceclaim controller removes it).
inline constexpr const char* kClaimFinalizer = "resource.kubernetes.io/delete-protection";
// The attribute a GPU device's NVLink island is read from (strata's name): an integer.
inline constexpr const char* kIslandAttribute = "gpu.strata.dev/nvlinkIsland";

// The DRA objects last seen, as the API returned them.
struct DraObjects {
  std::map<std::string, nlohmann::json> slices;   // by name
  std::map<std::string, nlohmann::json> claims;   // by "namespace/name"
  std::map<std::string, nlohmann::json> classes;  // by name
};

// One allocatable device of a node.
struct DraDevice {
  std::string driver, pool, name;
  DeviceView view;
  bool tainted = false;
  // "driver/pool/name": how allocation results name it.
  std::string Id() const { return driver + "/" + pool + "/" + name; }
};

// A pod's reference to a claim: spec.resourceClaims[] {name, resourceClaimName |
// resourceClaimTemplateName}; a template's claim is named in status.resourceClaimStatuses.
struct PodClaimRef {
  std::string name;        // the reference's name in the pod
  std::string claim_name;  // "" while a template's claim is not made yet
  bool operator==(const PodClaimRef&) const = default;
};

// A pod's claims, resolved against a DraCluster.
struct PodClaims {
  struct Request {
    std::string name;
    std::vector<DeviceSelector> selectors;  // the class's, then the request's
    int count = 1;
  };
  struct Claim {
    std::string namespace_name, name;
    const nlohmann::json* object = nullptr;  // as stored
    std::vector<std::string> allocated;      // devices of its allocation ("driver/pool/name")
    bool reserved = false;                   // status.reservedFor names the pod
    std::vector<Request> requests;           // when not allocated
    std::string match_attribute;             // "" for none
    std::set<std::string> constrained;       // the requests it holds for (all when empty)
  };
  std::vector<Claim> claims;
  // Why the pod cannot be placed now ("" when it can): a claim not made yet or unsupported.
  std::string why;
  // The node its allocated claims bind it to ("" when none is allocated).
  std::string node;
  // Devices still to allocate.
  int to_allocate = 0;
};

// What one claim gets when a pod is placed: the status to write (allocation and reservation).
struct ClaimWrite {
  std::string namespace_name, name;
  nlohmann::json claim;  // the claim with its new status (and finalizer), as stored before
  bool add_finalizer = false;
};

// The cluster's DRA state, made of DraObjects once per change. Pure; thread-compatible.
class DraCluster {
 public:
  // `gpu_driver`: the driver whose devices are GPUs ("gpu.nvidia.com").
  DraCluster(const DraObjects& objects, std::string gpu_driver);

  // The node's GPUs from its slices, in name order (their indices are the scheduler's GPU
  // indices), or null when it has none.
  const std::vector<DraDevice>* GpusOf(std::string_view node) const;
  // The scheduler's GPU for a device: productName, memory (MiB), island (kIslandAttribute).
  scheduler::Gpu AsGpu(const DraDevice& device) const;
  // The node of device "driver/pool/name", or "".
  std::string NodeOfDevice(const std::string& id) const;
  // Index of device `id` among GpusOf(node), or -1.
  int IndexOf(const std::string& node, const std::string& id) const;
  // Devices some claim's allocation holds.
  const std::set<std::string>& allocated() const { return allocated_; }

  // Resolves the claims `refs` of pod `namespace_name`/`pod_uid`.
  PodClaims Resolve(const std::string& namespace_name, const std::string& pod_uid,
                    const std::vector<PodClaimRef>& refs) const;

  // Allocates the unallocated claims of `claims` on `node` from devices neither allocated nor in
  // `used`, preferring GPU indices `preferred` (the scheduler's choice); adds what it takes to
  // `used` and returns the device indices taken, in order. FailedPrecondition saying why when
  // they do not fit.
  Result<std::vector<int>> Allocate(const PodClaims& claims, const std::string& node,
                                    const std::vector<int>& preferred,
                                    std::set<std::string>* used) const;
  // The writes that record `claims`' allocation on `node` (devices `taken`, as Allocate
  // returned them) and their reservation for the pod: for each claim not yet reserved for it.
  std::vector<ClaimWrite> Writes(const PodClaims& claims, const std::string& node,
                                 const std::vector<int>& taken, const std::string& pod_name,
                                 const std::string& pod_uid) const;

 private:
  std::string gpu_driver_;
  std::map<std::string, std::vector<DraDevice>, std::less<>> gpus_;  // by node
  std::map<std::string, std::string> device_node_;                   // device id -> node
  std::set<std::string> allocated_;
  const DraObjects* objects_;
};

// A pod's spec.resourceClaims, with the names status.resourceClaimStatuses gives templates.
std::vector<PodClaimRef> PodClaimRefs(const nlohmann::json& pod);

}  // namespace strata::kubesched
