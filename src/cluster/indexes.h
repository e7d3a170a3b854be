#pragma once

#include <string>

#include "cluster/cache.h"

// The indexes and kinds every loop of a control plane reads through its one cache.
namespace strata::cluster {

// Pods by the workload that owns them: "Job/<namespace>/<name>", "Service/<namespace>/<name>".
inline constexpr char kPodsByOwner[] = "pods-by-owner";
// Pods by the node they are bound to.
inline constexpr char kPodsByNode[] = "pods-by-node";

// The kPodsByOwner value for an owner.
std::string OwnerIndexValue(std::string_view kind, std::string_view namespace_name,
                            std::string_view name);

// Every kind the control plane serves (Node, Queue, ResourceFlavor, Job, Service, Pod, Tenant,
// Event), with the two indexes above.
CacheOptions ControlPlaneCacheOptions();

// What a node agent reads: Nodes and Pods, with kPodsByNode.
CacheOptions NodeAgentCacheOptions();

}  // namespace strata::cluster
