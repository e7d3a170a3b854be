#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cluster/cache.h"
#include "common/clock.h"
#include "common/status.h"
#include "kube/client.h"
#include "store/store.h"

namespace strata::server {

// Renews the Lease of node `node_name` at `now`: in the embedded plane's memory
// (controller::NodeLeases), through its REST API (client::RemoteStore::RenewNodeLease), or on
// Kubernetes (kubestore::NodeLeaseRenewer).
using LeaseRenewal = std::function<Status(const std::string& node_name, TimePoint now)>;

// The renewal on Kubernetes: a kubestore::NodeLeaseRenewer over `client` (which must outlive it),
// kept by the returned function.
LeaseRenewal KubernetesLeaseRenewal(kube::Client& client);

struct NodeHeartbeatOptions {
  // A Ready node's status is written again once its lastHeartbeatTime is this old (kubelet's
  // nodeStatusReportFrequency). Zero: every beat, for a node controller that reads no Leases.
  Duration status_report_interval = std::chrono::minutes(5);
};

// A node agent's heartbeat, as a kubelet's since Kubernetes 1.17: each Beat renews every named
// node's Lease, and writes its Ready condition (True, lastHeartbeatTime now: HeartbeatNodes)
// only when the condition is not True (a node just registered without it, or one the node
// controller marked lost) or its heartbeat is older than the report interval. The node is read
// from `cache` (which must hold Nodes), so a beat that writes no status costs one renewal.
//
// Owned by the agent's loop; `store` and `cache` (over the same store) must outlive it; not
// thread-safe.
class NodeHeartbeat {
 public:
  NodeHeartbeat(store::Store& store, cluster::Cache& cache, LeaseRenewal renew,
                NodeHeartbeatOptions options = {});

  // Beats for every node in `names`, even after one fails; returns the first error. A node that
  // does not exist is skipped.
  Status Beat(const std::vector<std::string>& names, TimePoint now);

 private:
  // Whether the cached Node `name` needs its Ready condition written at `now`; false for a node
  // that is not cached (it does not exist).
  bool StatusDue(const std::string& name, TimePoint now) const;

  store::Store& store_;
  cluster::Cache& cache_;
  LeaseRenewal renew_;
  NodeHeartbeatOptions options_;
};

}  // namespace strata::server
