#pragma once

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "api/node_lease.h"
#include "common/clock.h"
#include "common/status.h"
#include "kube/client.h"

namespace strata::kubestore {

// What a kubelet keeps beside its Node: the Lease `node_name` in kube-node-lease, held by the
// node and renewed every heartbeat, owned by the Node (deleted with it), so that Kubernetes'
// node lifecycle controller sees the node alive as it sees a kubelet's.
//
// As kubelet's lease controller does, a renewal updates the Lease this renewer last wrote (one
// PUT, with its resourceVersion as the precondition), and reads it only the first time or after
// someone else changed or deleted it (a Conflict or NotFound: then it reads, and renews in the
// same call). Creates the Lease when there is none; a Node that does not exist yet gets a Lease
// without an owner. Thread-safe.
class NodeLeaseRenewer {
 public:
  // `client` must outlive the renewer.
  explicit NodeLeaseRenewer(kube::Client& client, Duration lease_duration = api::kNodeLeaseDuration)
      : client_(client), lease_duration_(lease_duration) {}

  // Renews node `node_name`'s Lease at `now`; returns the API's error.
  Status Renew(const std::string& node_name, TimePoint now);

 private:
  // Reads (or creates) the Lease and renews it.
  Result<nlohmann::json> ReadAndRenew(const std::string& node_name, TimePoint now);

  kube::Client& client_;
  const Duration lease_duration_;
  std::mutex mu_;
  std::map<std::string, nlohmann::json> last_;  // per node, the Lease as last written
};

}  // namespace strata::kubestore
