#pragma once

#include "scheduler/queue_order.h"

namespace strata::scheduler {

// Kueue's order without fair sharing: the queue whose next workload has the highest priority,
// then the earliest submission, goes next, whatever the queues' usage; within a queue, the same
// order (PriorityThenSubmitted). Quotas and borrowing still apply; only the order differs from
// fair-share. Stateless apart from its seed.
class PriorityFifoOrder final : public QueueOrder {
 public:
  explicit PriorityFifoOrder(uint64_t seed) : seed_(seed) {}

  std::string_view name() const override { return "priority-fifo"; }
  bool Before(const Workload& a, const Workload& b) const override {
    return PriorityThenSubmitted(seed_, a, b);
  }
  QueueRank Rank(double /*dominant_share*/, const Workload& head) const override {
    return {0.0, -int64_t{head.priority}, head.submitted.time_since_epoch().count(),
            TieBreak(seed_, head.name)};
  }

 private:
  uint64_t seed_;
};

}  // namespace strata::scheduler
