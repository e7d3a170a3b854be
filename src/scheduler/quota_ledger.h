#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "scheduler/model.h"

namespace strata::scheduler {

// Quota use per queue and flavor, with Kueue's cohort rules: a queue may use its nominal quota
// and borrow up to its borrowing limit from what the other queues of its cohort lend (their
// unused nominal, up to their lending limits). Also the dominant resource share that orders
// queues for fair sharing. Owned by one scheduling cycle; not thread-safe. Keeps a reference to
// the cluster, which must outlive it.
class QuotaLedger {
 public:
  explicit QuotaLedger(const Cluster& cluster);

  // Index of the queue named `name` in Cluster::queues, or -1.
  int QueueIndex(std::string_view name) const;

  // What admitting `workload` in `flavor` (null: no flavor) charges: milli-GPUs, GPU memory
  // (shares and MIG instances by their memory; whole GPUs by the flavor's GPU memory, if set),
  // CPU and memory, summed over every pod.
  static ResourceVector ChargeFor(const Workload& workload, const Flavor* flavor);

  // True if queue `queue` has quota in `flavor` and can take `request` more without exceeding
  // its nominal quota plus what it may borrow now.
  bool Fits(int queue, int flavor, const ResourceVector& request) const;
  // True if the queue's usage plus `request` stays within its nominal quota in `flavor`,
  // whatever others borrow (the condition for reclaiming lent quota).
  bool WithinNominal(int queue, int flavor, const ResourceVector& request) const;

  // For a request that does not fit: "queue team-a: 32/32 nvidia.com/gpu in use, cohort can
  // lend 0" for the first resource that blocks it.
  std::string Explain(int queue, int flavor, const ResourceVector& request) const;

  void Add(int queue, int flavor, const ResourceVector& amount);
  void Subtract(int queue, int flavor, const ResourceVector& amount);

  // True if the queue uses more than its nominal quota of some resource in `flavor`.
  bool IsBorrowing(int queue, int flavor) const;
  // max over resources of usage / cohort nominal (the queue's own nominal without a cohort),
  // divided by the queue's weight. 0 for a queue without quota.
  double DominantShare(int queue) const;
  // The cohort id of a queue, -1 if it has none.
  int CohortOf(int queue) const { return queues_[queue].cohort; }

 private:
  struct QueueState {
    int cohort = -1;
    std::vector<const FlavorQuota*> quota;  // by flavor; null: no quota in that flavor
    std::vector<ResourceVector> usage;      // by flavor
  };
  struct Pool {
    ResourceVector capacity;  // lendable nominal, summed over the cohort's queues
    ResourceVector used;      // usage above each queue's guaranteed (non-lendable) part
  };

  static int64_t Guaranteed(const ResourceQuota& quota);
  // The most queue `queue` may use of `r` in `flavor` given everyone else's usage, or nullopt
  // when unlimited.
  std::optional<int64_t> Ceiling(int queue, int flavor, Resource r) const;
  Pool& PoolOf(int cohort, int flavor) { return pools_[cohort * num_flavors_ + flavor]; }
  const Pool& PoolOf(int cohort, int flavor) const {
    return pools_[cohort * num_flavors_ + flavor];
  }
  void Apply(int queue, int flavor, const ResourceVector& amount, int sign);

  const Cluster& cluster_;
  int num_flavors_ = 0;
  std::unordered_map<std::string, int> queue_index_;
  std::vector<QueueState> queues_;
  std::vector<Pool> pools_;                     // [cohort * flavors + flavor]
  std::vector<ResourceVector> cohort_nominal_;  // [cohort], summed over flavors
};

}  // namespace strata::scheduler
