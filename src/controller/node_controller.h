#pragma once

#include "cluster/cache.h"
#include "cluster/event_recorder.h"
#include "common/clock.h"
#include "controller/control_loop.h"
#include "controller/node_leases.h"
#include "store/store.h"

namespace strata::controller {

struct NodeControllerOptions {
  // A Ready node whose last heartbeat is older than this is lost (kube-controller-manager's
  // node-monitor-grace-period).
  Duration grace_period = std::chrono::seconds(40);
  Duration event_repeat_interval = std::chrono::minutes(1);
  // The node Leases the agents renew (embedded planes); null: only the Ready condition's
  // heartbeat counts.
  const NodeLeases* leases = nullptr;
  // Whether this controller marks lost nodes NotReady. On Kubernetes it does not:
  // kube-controller-manager's node lifecycle controller marks a node whose Lease lapsed
  // Ready=Unknown (as for every node of the cluster), and this controller fails the pods of
  // every node that is not Ready.
  bool mark_lost = true;
};

// The node controller. Node agents heartbeat as kubelets do: they renew their node's Lease every
// few seconds (NodeLeases) and stamp lastHeartbeatTime in their node's Ready condition when it
// changes or every few minutes. A node was last alive at the later of the two. Each pass marks
// every Ready node last alive longer ago than the grace period NotReady (Ready=Unknown, reason
// NodeStatusUnknown, Kubernetes' words) with a NodeNotReady event; and fails every live pod bound
// to a node that is not Ready (phase Failed, reason NodeLost), since nothing reports on it any
// more. The job controller then restarts those pods' jobs, and the scheduler places them where
// there is room (a node that is not Ready is tainted node.kubernetes.io/not-ready). A node that
// heartbeats again is marked Ready by its agent, which sees its Node is not Ready. It reads through
// the cache (Nodes, and Pods with cluster::kPodsByNode); each write is of one object, the node's
// first, so a pass after a crash fails what is left.
//
// Owned by the loop that drives it (ControlLoop); not thread-safe; keeps no state between
// passes (the leases are the plane's).
class NodeController final : public ControlLoop {
 public:
  // `store`, `cache` and `clock` must outlive the controller.
  NodeController(store::Store& store, cluster::Cache& cache, const Clock& clock,
                 NodeControllerOptions options = {});

  Status RunOnce() override;

 private:
  store::Store& store_;
  cluster::Cache& cache_;
  const Clock& clock_;
  NodeControllerOptions options_;
  cluster::EventRecorder events_;
};

}  // namespace strata::controller
