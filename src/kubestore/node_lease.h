#pragma once

#include <string>

#include "api/node_lease.h"
#include "common/clock.h"
#include "common/status.h"
#include "kube/client.h"

namespace strata::kubestore {

// What a kubelet keeps beside its Node: the Lease `node_name` in kube-node-lease, held by the
// node and renewed every heartbeat, owned by the Node (deleted with it), so that Kubernetes'
// node lifecycle controller sees the node alive as it sees a kubelet's. Creates the Lease the
// first time; a Node that does not exist yet gets a Lease without an owner. Returns the API's
// error (Conflict when someone else renewed it meanwhile: the next heartbeat renews it).
Status RenewNodeLease(kube::Client& client, const std::string& node_name, TimePoint now,
                      Duration lease_duration = api::kNodeLeaseDuration);

}  // namespace strata::kubestore
