#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "scheduler/fragmentation.h"
#include "scheduler/node_pools.h"
#include "scheduler/pool_demand.h"

namespace strata::scheduler {

// Keeps each pool of like nodes its share of the free GPUs for the pods that can run on few others.
//
// Fragmentation scores (FGD's and strata's) look at one node at a time, so they cannot see that a
// small pool (say 39 eight-GPU nodes of one model among 1,200) is all that some pods will ever
// have: pods that could run elsewhere fill such a pool as readily as any other, often faster (a
// pool of small nodes is "fragmented" for big shapes, so filling it scores well), and the pods
// that need it then fail while the cluster is half empty. A pool is the nodes of one kind
// (NodePools: GPU model, GPU count, CPU and memory). A pod needs the pools whose nodes, empty,
// could hold it (its GPU model constraint, its GPU count, CPU and memory) when that is not every
// pool with GPUs. A pool's reserve is the share of the observed GPU demand that needs it (a pod
// that several pools could hold counts toward each in proportion to their GPUs). A pool is short
// for a pod when placing the pod there would leave the pool less than its reserve's share of the
// cluster's free GPUs. A caller that sees the whole cluster offers a pod only the feasible nodes
// of pools that are not short, whatever the scores say elsewhere, or when every feasible pool is
// short, those of the pool that covers its reserve best (KeepCovered; a caller that walks nodes
// in its own order compares CoverRank instead). The openb replay's placer and the gang placer
// (strata's scheduler) both do. Constant once built; pure functions; thread-safe.
class PoolReserve {
 public:
  // The pools of `nodes` (the cluster, each node empty: its full capacity) and their reserves for
  // the GPU demand of `observed`. CPU-only pods and pods that every pool with GPUs could hold add
  // nothing; without such demand no pool is ever short.
  PoolReserve(std::span<const GpuPodRequest> observed, std::span<const GpuNodeFree> nodes);
  // The reserves of the demand's pools for the demand, as above.
  explicit PoolReserve(const PoolDemand& observed);

  // The pool of the node at `node_index` of the pools' nodes, 0..pool_count()-1.
  int PoolOf(size_t node_index) const { return pools_->PoolOf(node_index); }
  int pool_count() const { return static_cast<int>(share_.size()); }

  // The share (0..1) of the observed GPU demand that needs `pool`.
  double ShareOf(int pool) const { return share_[pool]; }
  // True when some pool keeps a reserve (some share above 0): otherwise no pool is ever short.
  bool Active() const { return active_; }

  // How well `pool` would still cover its reserve after a pod that takes `taken_milli` milli-GPU
  // is placed there: the pool's free milli-GPU (`pool_free_milli` before the pod) over its share
  // of the cluster's free milli-GPU (`cluster_free_milli` before the pod), both after the pod. 1
  // or more: the reserve is kept; below 1 the pool is short. Infinity for a pool without a
  // reserve, a pod that takes no milli-GPU (CPU only, MIG) or nothing left free in the cluster.
  double Cover(int pool, int64_t taken_milli, int64_t pool_free_milli,
               int64_t cluster_free_milli) const;
  double Cover(int pool, const GpuPodRequest& pod, int64_t pool_free_milli,
               int64_t cluster_free_milli) const {
    return Cover(pool, pod.TotalGpuMilli(), pool_free_milli, cluster_free_milli);
  }
  // Cover capped at 1: nodes whose pools rank higher are preferred, and nodes of equal rank are
  // alike to the reserve (every pool that keeps its reserve ranks 1). Among feasible nodes,
  // KeepCovered keeps exactly those of the highest rank.
  double CoverRank(int pool, int64_t taken_milli, int64_t pool_free_milli,
                   int64_t cluster_free_milli) const;

  // Of `candidates` (indices of nodes that can take `pod`), those in the pools that keep their
  // reserve after it (Cover at least 1) or, when none does, in the pools that cover it best.
  // `pool_free_milli` is every pool's free milli-GPU now, by pool.
  std::vector<size_t> KeepCovered(const GpuPodRequest& pod, std::span<const size_t> candidates,
                                  std::span<const int64_t> pool_free_milli) const;

 private:
  std::shared_ptr<const NodePools> pools_;
  std::vector<double> share_;  // by pool
  bool active_ = false;
};

}  // namespace strata::scheduler
