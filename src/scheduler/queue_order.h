#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/status.h"
#include "scheduler/model.h"

namespace strata::scheduler {

// How a scheduling cycle orders the pending workloads: within each queue, and which queue's next
// workload is tried next. One interface, one file per order; SchedulerOptions::queue_order names
// the one a scheduler uses.

// The rank of a queue whose next workload is waiting: the queue with the lowest rank goes next
// (equal ranks: by queue name). Compared as a tuple.
using QueueRank = std::tuple<double, int64_t, int64_t, uint64_t>;

// Owned by one scheduler; const, so safe to share between cycles.
class QueueOrder {
 public:
  virtual ~QueueOrder() = default;

  // "fair-share" or "priority-fifo".
  virtual std::string_view name() const = 0;

  // True when `a` goes before `b` within one queue: a strict weak order.
  virtual bool Before(const Workload& a, const Workload& b) const = 0;

  // The rank of a queue whose weighted dominant-resource share is `dominant_share` (0 for
  // workloads without a queue) and whose next workload is `head`. Asked again whenever the
  // queue comes back for its next workload.
  virtual QueueRank Rank(double dominant_share, const Workload& head) const = 0;
};

// Within a queue, the order every QueueOrder here uses: higher priority first, then earlier
// submission, then a per-seed hash of the name, then the name.
bool PriorityThenSubmitted(uint64_t seed, const Workload& a, const Workload& b);

// A deterministic per-seed hash of a workload's name, breaking ties between otherwise equal
// workloads.
uint64_t TieBreak(uint64_t seed, std::string_view name);

// The names MakeQueueOrder accepts.
std::vector<std::string_view> QueueOrderNames();

// The order called `name`, breaking ties with `seed`. InvalidArgument listing the names
// otherwise.
Result<std::unique_ptr<QueueOrder>> MakeQueueOrder(std::string_view name, uint64_t seed);

}  // namespace strata::scheduler
