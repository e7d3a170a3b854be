#include "gateway/queue_scorer.h"

#include <algorithm>
#include <limits>

namespace strata::gateway {

void QueueScorer::Score(std::span<const ScoringCandidate> candidates,
                        const ScoringRequest& /*request*/, std::span<double> scores) {
  const auto queue = [&](const ScoringCandidate& c) {
    return c.scraped_queue + (count_in_flight_ ? c.in_flight : 0);
  };
  int64_t lowest = std::numeric_limits<int64_t>::max();
  int64_t highest = std::numeric_limits<int64_t>::min();
  for (const ScoringCandidate& c : candidates) {
    lowest = std::min(lowest, queue(c));
    highest = std::max(highest, queue(c));
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    scores[i] = highest <= lowest ? 1.0
                                  : 1.0 - static_cast<double>(queue(candidates[i]) - lowest) /
                                              static_cast<double>(highest - lowest);
  }
}

}  // namespace strata::gateway
