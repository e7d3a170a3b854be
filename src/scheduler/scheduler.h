#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/model.h"
#include "scheduler/queue_order.h"

namespace strata::scheduler {

struct SchedulerOptions {
  // Breaks ties between workloads of equal priority and submit time; same seed, same decisions.
  uint64_t seed = 0;
  // A workload preempted this many times is no longer a preemption victim.
  int max_preemptions_per_workload = 3;
  // Whether pending workloads get kube-scheduler's FitError text (costs a pass over the nodes
  // per distinct failing shape).
  bool explain = true;
  // The order of pending workloads (scheduler/queue_order.h: "fair-share" or "priority-fifo").
  std::string queue_order = "fair-share";
  // The node-choice policy for fractional GPU requests (scheduler/placement_policy.h: "strata",
  // or one of the FGD artifact's baselines). A policy that keeps pool reserves (strata's) has
  // them kept for whole GPUs too (pool_reserve.h, gang_placer.h).
  std::string share_placement = "strata";
};

// One scheduling cycle as a pure function: Snapshot + pending workloads -> Decisions.
//
// Order: queues by weighted dominant-resource share (lowest first, re-evaluated after every
// admission), within a queue by priority, then submit time. Admit: the whole request fits the
// queue's quota (nominal + what the cohort lends) in one of its flavors. Place the whole gang or
// nothing (smallest topology domain, best fit, one NVLink island per pod, fragmentation-aware
// shares, each pool of like nodes kept its reserve for the pods that need it). Otherwise preempt,
// only if the gang then fits whole: lower priority in the same queue, or reclaim from cohort queues
// borrowing over nominal, cheapest lost work first. Otherwise the first such gang gets a
// reservation; later workloads use its nodes only if their runtime limit ends before it starts.
// Every workload not bound gets a Pending with a tier.
//
// Stateless apart from its options; Cycle is const and may run on any thread, one call per
// snapshot.
class Scheduler {
 public:
  // REQUIRES: options name a known queue order and share placement policy.
  explicit Scheduler(SchedulerOptions options = {});

  // Decides for every workload in `pending` (names unique and distinct from running ones).
  // Bindings only use capacity free in `snapshot`; preemption victims keep their resources
  // until the caller evicts them. Never fails: bad workloads (unknown queue, unknown topology
  // level or MIG profile) get a Pending with tier kInvalid naming the field.
  Decisions Cycle(const Snapshot& snapshot, const std::vector<Workload>& pending) const;

 private:
  SchedulerOptions options_;
  std::shared_ptr<const QueueOrder> order_;  // shared by copies; const
};

}  // namespace strata::scheduler
