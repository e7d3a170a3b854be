#pragma once

#include <nlohmann/json.hpp>
#include <vector>

namespace strata::kubestore {

// The RBAC rules of exactly the requests `strata up --store kubernetes` makes, cluster-wide:
//   strata.dev's kinds and their /status: every verb but deletecollection (api::ControlPlaneRules)
//   nodes: get, list, watch, create, update; nodes/status: update
//                                              its nodes (KubeStore, RegisterNodes, heartbeats)
//   pods: get, list, watch, create, update, delete; pods/status: update; pods/binding: create
//                                              its pods (KubeStore's writes, the scheduler's binds)
//   events: get, list, watch, create, update   its events (EventRecorder through KubeStore)
//   subjectaccessreviews: create               the kubelet endpoint's authorization
// plus, through their own Roles, NodeLeaseRules() in kube-node-lease and the election's
// kube::LeaderElectionRules() in the Lease's namespace.
std::vector<nlohmann::json> StoreClusterRules();

// The node Leases (node_lease.h) in kube-node-lease: get, create, update. RBAC cannot narrow
// them to the plane's own nodes by name, since their names are the plane's to choose.
std::vector<nlohmann::json> NodeLeaseRules();

}  // namespace strata::kubestore
