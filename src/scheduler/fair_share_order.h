#pragma once

#include "scheduler/queue_order.h"

namespace strata::scheduler {

// Fair sharing (Kueue's fair sharing, Mesos' DRF sorter): the queue with the lowest weighted
// dominant-resource share in its cohort goes next, re-evaluated after every admission; within a
// queue, priority then submission time (PriorityThenSubmitted). strata's default. Stateless
// apart from its seed.
class FairShareOrder final : public QueueOrder {
 public:
  explicit FairShareOrder(uint64_t seed) : seed_(seed) {}

  std::string_view name() const override { return "fair-share"; }
  bool Before(const Workload& a, const Workload& b) const override {
    return PriorityThenSubmitted(seed_, a, b);
  }
  QueueRank Rank(double dominant_share, const Workload& /*head*/) const override {
    return {dominant_share, 0, 0, 0};
  }

 private:
  uint64_t seed_;
};

}  // namespace strata::scheduler
