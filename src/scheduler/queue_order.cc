#include "scheduler/queue_order.h"

#include <fmt/format.h>

#include "scheduler/fair_share_order.h"
#include "scheduler/priority_fifo_order.h"

namespace strata::scheduler {

uint64_t TieBreak(uint64_t seed, std::string_view name) {
  uint64_t h = 1469598103934665603ULL;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  uint64_t z = h + seed + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

bool PriorityThenSubmitted(uint64_t seed, const Workload& a, const Workload& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.submitted != b.submitted) return a.submitted < b.submitted;
  const uint64_t ta = TieBreak(seed, a.name);
  const uint64_t tb = TieBreak(seed, b.name);
  if (ta != tb) return ta < tb;
  return a.name < b.name;
}

std::vector<std::string_view> QueueOrderNames() { return {"fair-share", "priority-fifo"}; }

Result<std::unique_ptr<QueueOrder>> MakeQueueOrder(std::string_view name, uint64_t seed) {
  if (name == "fair-share") {
    return std::unique_ptr<QueueOrder>(std::make_unique<FairShareOrder>(seed));
  }
  if (name == "priority-fifo") {
    return std::unique_ptr<QueueOrder>(std::make_unique<PriorityFifoOrder>(seed));
  }
  return Err(InvalidArgumentError(
      fmt::format("unknown queue order \"{}\" (expected fair-share or priority-fifo)", name)));
}

}  // namespace strata::scheduler
