#pragma once

#include <string>
#include <vector>

#include "scheduler/capacity_index.h"
#include "scheduler/fragmentation.h"
#include "scheduler/model.h"
#include "scheduler/node_fit.h"
#include "scheduler/placement_policy.h"
#include "scheduler/pool_reserve.h"

namespace strata::scheduler {

// The outcome of placing one gang.
struct GangOutcome {
  bool placed = false;
  std::vector<PodPlacement> pods;  // every pod when placed
  // When not placed: the gang fits the cluster but no single domain of the topology level it
  // requires; how many pods found room before the first that did not; and kube-scheduler's
  // FitError for that pod (only when explanations were asked for).
  bool topology_failed = false;
  int pods_fitted = 0;
  int pods_total = 0;
  std::string message;
};

// Places whole gangs on a CapacityIndex: the smallest topology domain that fits every pod (best
// fit by free whole GPUs), then per pod the node with the fewest free whole GPUs that fits
// (nodes bucketed by free GPUs, so this is a walk up buckets), shares placed by the share
// policy (strata's: to minimise fragmentation for the expected mix of shapes). With a pool
// reserve (pool_reserve.h), a pod that takes milli-GPU (whole GPUs or a share) is offered only
// the nodes of pools that keep their reserve, or when no feasible pool does, of those that cover
// it best, before best fit or the share policy choose among them; the domain choice is left as
// it is and the reserve applies within the domain. All or nothing: on failure the index is left
// as it was. Used by one scheduling cycle; not thread-safe; the index, the policy and the reserve
// must outlive it.
class GangPlacer {
 public:
  // `reserve` (may be null: none) must be built on `index`'s pools.
  GangPlacer(CapacityIndex& index, PlacementPolicy& share_policy,
             const PoolReserve* reserve = nullptr)
      : index_(index), share_policy_(share_policy), reserve_(reserve) {}

  // Places every pod of `workload` and allocates them in the index, or allocates nothing.
  // The reserve decides where, never whether: a gang that places only by ignoring it (an earlier
  // pod kept away from a short pool takes room a later pod needed) is placed without it, so the
  // reserve never leaves pending, or makes preempt, a workload that fits.
  // REQUIRES: the workload's topology level, if any, is known to the index (LevelOf >= 0).
  GangOutcome Place(const Workload& workload, const FitContext& context, bool explain);

  // Gives back the resources of `pods` (of `workload`) and clears it.
  void Unplace(const Workload& workload, std::vector<PodPlacement>* pods);

 private:
  GangOutcome PlaceGang(const Workload& workload, const FitContext& context, bool explain);
  // Places all pods within domain `domain` (a node index when `host_level`). On failure what it
  // placed stays allocated in *pods (so the failure can be explained); the caller unplaces it.
  bool PlaceIn(const Workload& workload, const FitContext& context, int domain, bool host_level,
               std::vector<PodPlacement>* pods, int* failed_pod_set);
  int PickNode(const PodSet& pod_set, const FitContext& context, int domain, bool host_level,
               std::vector<int>* gpus);
  int PickWholeNode(const PodSet& pod_set, const FitContext& context, const Domain& domain,
                    std::vector<int>* gpus);
  int PickSharedNode(const PodSet& pod_set, const FitContext& context, const Domain& domain,
                     std::vector<int>* gpus);
  int PickPlainNode(const PodSet& pod_set, const FitContext& context, const Domain& domain,
                    std::vector<int>* gpus);
  bool Usable(int node, const PodSet& pod_set, const FitContext& context) const;
  // PoolReserve::CoverRank of `node`'s pool for a pod of `pod_set` now: 1 when the pool keeps
  // its reserve, or no reserve is being kept.
  double ReserveRank(int node, const PodSet& pod_set) const;
  // The best ReserveRank any node could have for a pod of `pod_set` now: that of the best pool
  // whose nodes, empty, could hold it. A walk over nodes stops at the first node of that rank.
  double BestPossibleRank(const PodSet& pod_set) const;
  bool ChooseByPolicy(int node, const PodSet& pod_set, ScoredPlacement* placement) const;
  // Why `pod_set` fits no node, once `fitted` of the workload's `total` pods are placed.
  std::string Explain(const PodSet& pod_set, const FitContext& context, int fitted,
                      int total) const;
  std::vector<int> CandidateDomains(int level, int64_t whole_gpus) const;

  CapacityIndex& index_;
  PlacementPolicy& share_policy_;
  const PoolReserve* reserve_;
  bool keep_reserve_ = false;  // during Place: whether this attempt keeps the reserve
};

}  // namespace strata::scheduler
