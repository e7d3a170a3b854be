#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/model.h"

namespace strata::scheduler {

// What a cluster could hold with nothing running on it: the ceiling no placement, preemption or
// wait can get past. Built once per cycle from the cluster's nodes (grouped by shape, so a
// workload's check costs the number of distinct node shapes, not of nodes); taints, selectors
// and cordons are left out, so the ceiling is never below what the cluster could really hold,
// and a workload above it can never fit until nodes are added or it asks for less.
//
// A plain value, built and read by one cycle; thread-compatible.
class CapacityCeiling {
 public:
  explicit CapacityCeiling(const Cluster& cluster);

  // Why `workload` can never be placed on this cluster, whatever ends or is preempted:
  // "can never fit this cluster: ..." with the numbers; empty when it might fit, and always
  // empty for a cluster without nodes (its nodes are still to join).
  std::string NeverFits(const Workload& workload) const;

 private:
  // Nodes alike in what a pod's request is measured against.
  struct NodeShape {
    int64_t cpu_milli = 0;
    int64_t memory_bytes = 0;
    int64_t gpus = 0;
    int64_t gpu_memory_mib = 0;  // the largest GPU's
    int64_t nodes = 0;

    // How many pods of `pod_set` one such node could hold, empty.
    int64_t PodsPerNode(const PodSet& pod_set) const;
  };

  std::vector<NodeShape> shapes_;
  int64_t nodes_ = 0;
  int64_t cpu_milli_ = 0;
  int64_t memory_bytes_ = 0;
  int64_t gpus_ = 0;
};

}  // namespace strata::scheduler
