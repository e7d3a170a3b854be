#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/clock.h"

namespace strata::controller {

// The node Leases of an embedded control plane (api/node_lease.h), kept in memory as
// kube-controller-manager keeps the probe times it observed: a renewal every 10 s from every
// node would otherwise be a store write each, which is most of an idle plane's CPU. A renewal
// records the plane's own clock time, so agents' clocks do not matter. Nothing of it survives a
// restart: the table's start counts as every node's renewal (AliveAt), so a restarted plane
// gives each node a full grace period to renew before it is judged lost, as a newly elected
// kube-controller-manager does. Only existing nodes renew (the REST API checks), and a deleted
// node's Lease goes with it (as a kubelet's, which its Node owns), so the table holds one entry
// per node.
//
// Owned by the control plane; thread-safe (the REST API renews, the node controller reads).
class NodeLeases {
 public:
  // `since`: when the table started (the plane's start).
  explicit NodeLeases(TimePoint since) : since_(since) {}

  void Renew(const std::string& node_name, TimePoint now);
  // Drops the Lease of `node_name` (a deleted node's).
  void Forget(const std::string& node_name);
  // The last renewal of `node_name`, nullopt when none was seen since the start.
  std::optional<TimePoint> Renewed(const std::string& node_name) const;
  // The last time `node_name` is known to have been alive: its last renewal, or the table's
  // start when it renewed none since.
  TimePoint AliveAt(const std::string& node_name) const;

 private:
  const TimePoint since_;
  mutable std::mutex mutex_;
  std::map<std::string, TimePoint, std::less<>> renewed_;
};

}  // namespace strata::controller
