#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "scheduler/model.h"
#include "scheduler/node_pools.h"

namespace strata::scheduler {

// Free capacity of one GPU.
struct GpuFree {
  int32_t milli = 1000;    // unshared compute left (non-MIG)
  int64_t memory_mib = 0;  // device memory left (non-MIG)
  int8_t mig_compute = 0;  // MIG compute slices left
  int8_t mig_memory = 0;   // MIG memory slices left
};

// A set of node indices with O(1) insert and erase. The owner keeps each member's position in
// `positions[node * stride + level]`, so one array serves the sets of every level.
class NodeSet {
 public:
  void Insert(int node, std::vector<int>& positions, int stride, int level);
  void Erase(int node, std::vector<int>& positions, int stride, int level);
  // Orders the members by node index.
  void Sort(std::vector<int>& positions, int stride, int level);
  const std::vector<int>& members() const { return members_; }
  bool empty() const { return members_.empty(); }

 private:
  std::vector<int> members_;
};

// One topology domain: the whole cluster (level 0) or the nodes sharing a label value at a
// topology level (levels 1..L, Cluster::topology_levels[level - 1]).
struct Domain {
  int level = 0;
  int parent = -1;
  std::string name;           // the label value; "" for the cluster
  std::vector<int> nodes;     // members, in cluster order
  std::vector<int> children;  // domains of the next level
  int64_t free_whole_gpus = 0;
  std::vector<NodeSet> by_free_gpus;  // [k]: nodes with exactly k whole GPUs free
  NodeSet shared;                     // nodes with a GPU that is shared and not full
  std::vector<int> mig_nodes;         // nodes with a MIG-enabled GPU
};

// The mutable free-capacity view of a cluster that a cycle works on: per node free CPU, memory
// and per-GPU free capacity; per topology domain the free whole GPUs and the nodes bucketed by
// free whole GPUs, so best-fit is a walk up buckets and a gang's feasibility a walk over
// domains; per pool of like nodes (NodePools, built once with the index and shared by its
// copies) the free milli-GPU, for the pool reserve. Owned by one scheduling cycle; not
// thread-safe. Keeps a reference to the cluster, which must outlive it.
class CapacityIndex {
 public:
  // Everything free. Nodes without a label of a topology level share the domain named "".
  explicit CapacityIndex(const Cluster& cluster);

  const Cluster& cluster() const { return cluster_; }
  int num_nodes() const { return static_cast<int>(cluster_.nodes.size()); }
  int num_levels() const { return num_levels_; }  // 1 + topology levels
  int max_gpus_per_node() const { return max_gpus_; }

  // Whether Allocate may take `placement` for one pod of `pod_set` now: the node and its GPU
  // indices exist, each named once, and what they still have covers the request (a whole GPU
  // wholly free and not MIG-enabled, a MIG profile's slices, a share of a GPU without MIG).
  // For placements strata did not make (pods bound by hand), which may not fit.
  bool CanAllocate(const PodSet& pod_set, const PodPlacement& placement) const;
  // Takes the resources of one pod of `pod_set` as placed by `placement`.
  // REQUIRES: CanAllocate(pod_set, placement) (checked: a broken invariant crashes).
  void Allocate(const PodSet& pod_set, const PodPlacement& placement);
  // Gives back what Allocate took for the same arguments.
  void Release(const PodSet& pod_set, const PodPlacement& placement);

  int64_t free_cpu(int node) const { return nodes_[node].free_cpu; }
  int64_t free_memory(int node) const { return nodes_[node].free_memory; }
  int free_whole_gpus(int node) const { return nodes_[node].free_whole; }
  const GpuFree& gpu(int node, int index) const { return gpus_[nodes_[node].first_gpu + index]; }

  // The cluster's pools of like nodes (each node as it is empty) and the milli-GPU free now in
  // each (non-MIG GPUs: whole GPUs and what shares leave) and in all of them.
  const std::shared_ptr<const NodePools>& pools() const { return pools_; }
  int PoolOf(int node) const { return pools_->PoolOf(node); }
  std::span<const int64_t> pool_free_milli() const { return pool_free_milli_; }
  int64_t free_milli() const { return free_milli_; }

  const Domain& domain(int id) const { return domains_[id]; }
  int num_domains() const { return static_cast<int>(domains_.size()); }
  int root() const { return 0; }
  // The domain of `node` at `level` (0: the cluster).
  int DomainOf(int node, int level) const { return node_domains_[node * num_levels_ + level]; }
  // The level of a topology label key, or -1; kHostLevel is num_levels().
  int LevelOf(std::string_view key) const;

  // Orders every node set by node index, so that which of equal nodes a cycle picks depends on
  // what is free, not on the order of the Allocates and Releases that made it so.
  void SortNodeSets();

  // Reservation marks: a reserved node is only used by workloads allowed to backfill it.
  void SetReserved(const std::vector<int>& nodes, bool reserved);
  bool reserved(int node) const { return nodes_[node].reserved; }

 private:
  struct NodeFree {
    int64_t free_cpu = 0;
    int64_t free_memory = 0;
    int free_whole = 0;
    int partly_used = 0;  // GPUs for which PartlyUsed holds
    int first_gpu = 0;
    bool reserved = false;
  };

  void BuildDomains();
  void BuildPools();
  // Adds `delta` milli-GPU to the free milli-GPU of `node`'s pool and of the cluster.
  void AddFreeMilli(int node, int64_t delta);
  void UpdateNode(int node, int old_free_whole, int old_partly_used);
  bool GpuWhollyFree(int node, int index) const;
  // Shared and still able to take a share: some, not all, compute and memory taken.
  bool PartlyUsed(int node, int index) const;

  const Cluster& cluster_;
  int num_levels_ = 1;
  int max_gpus_ = 0;
  std::vector<NodeFree> nodes_;
  std::vector<GpuFree> gpus_;
  std::vector<Domain> domains_;
  std::vector<int> node_domains_;     // [node * num_levels_ + level]
  std::vector<int> bucket_position_;  // [node * num_levels_ + level]
  std::vector<int> shared_position_;  // [node * num_levels_ + level]
  std::shared_ptr<const NodePools> pools_;
  std::vector<int64_t> pool_free_milli_;  // by pool
  int64_t free_milli_ = 0;
};

}  // namespace strata::scheduler
