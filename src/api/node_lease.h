#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace strata::api {

// A node's Lease, as a kubelet keeps it: coordination.k8s.io/v1 Lease NODE in kube-node-lease,
// held by the node and renewed every heartbeat. A renewal is one small write; the Node's status
// is written only when it changes or every few minutes, so a cluster of idle nodes costs the
// control plane little. Served on Kubernetes by the API server, and by strata's own REST API at
// NodeLeasePath (kept in memory there: controller::NodeLeases).
inline constexpr char kNodeLeaseNamespace[] = "kube-node-lease";
inline constexpr char kNodeLeaseApiVersion[] = "coordination.k8s.io/v1";
// How long a renewal keeps a node alive: kube-controller-manager's node-monitor-grace-period.
inline constexpr Duration kNodeLeaseDuration = std::chrono::seconds(40);

// "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/NODE".
std::string NodeLeasePath(std::string_view node_name);
// The node named by a lease path; nullopt for any other path.
std::optional<std::string> NodeOfLeasePath(std::string_view path);

// The Lease of `node_name` renewed at `renewed` (spec.holderIdentity, leaseDurationSeconds,
// renewTime in MicroTime), without owner or version, as JSON text (keys in sorted order, as
// nlohmann::json writes them). Written directly, without building a document: every renewal
// is answered with it.
std::string NodeLeaseJson(std::string_view node_name, TimePoint renewed,
                          Duration lease_duration = kNodeLeaseDuration);

}  // namespace strata::api
