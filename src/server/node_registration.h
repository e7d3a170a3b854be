#pragma once

#include <string>
#include <vector>

#include "api/annotations.h"
#include "api/node.h"
#include "common/clock.h"
#include "common/quantity.h"
#include "common/status.h"
#include "node/gpu_inventory.h"
#include "store/store.h"

namespace strata::server {

// CPU and memory a node offers to pods.
struct NodeCapacity {
  Quantity cpu;
  Quantity memory;
};

// The capacity of a simulated node: an 8-GPU HGX server's (224 hardware threads, 2 TiB).
NodeCapacity SimulatedNodeCapacity();
// This host's: its online CPUs and physical memory.
NodeCapacity HostCapacity();

// The Node objects for what an inventory found: labels (hostname, rack, GPU model and product,
// simulated),
// every GPU with its model in the spec's spelling ("H100-80GB" when the product name is a known
// model's), memory, NVLink island and MIG instances, and a Ready condition stamped `now`.
std::vector<api::Node> NodesFromInventory(const std::vector<node::NodeGpus>& nodes,
                                          const NodeCapacity& capacity, bool simulated,
                                          TimePoint now);

// The write that registers `node` given what the store holds now: a create for a new node, an
// update of status and labels for one that exists (keeping its spec, with the version read as
// precondition). Returns the store's error on a failed read.
Result<store::Write> RegistrationWrite(const store::Store& store, const api::Node& node);

// OK when no Node other than `node` reports a GPU or MIG instance UUID that `node` reports; a GPU
// belongs to one machine, and its UUID keys its readings and its pods' devices. Otherwise
// AlreadyExists naming the field, the UUID and the other node, and saying how an admin frees it
// (deleting the other node). Empty UUIDs claim nothing. Returns the store's error on a failed
// list. Used where agents register (joining, a node credential writing its status): with
// nodes written concurrently, two could still claim one UUID between this read and the write.
Status CheckGpuUuidsUnclaimed(const store::Store& store, const api::Node& node);

// Creates each node, or updates the status and labels of one that exists (keeping its spec:
// taints and unschedulable are the operator's), one node per write (no backend promises a
// transaction across objects; a node registered stays registered if the next one fails).
// Returns the store's first error.
Status RegisterNodes(store::Store& store, const std::vector<api::Node>& nodes);

// Stamps a new heartbeat into the Ready condition of each named node (Ready=True). A node that
// no longer exists is skipped. Returns the first store error. Node agents call it through
// NodeHeartbeat, which renews their Leases every beat and reports status only when due.
Status HeartbeatNodes(store::Store& store, const std::vector<std::string>& names, TimePoint now);

}  // namespace strata::server
