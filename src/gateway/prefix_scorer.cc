#include "gateway/prefix_scorer.h"

#include <algorithm>

namespace strata::gateway {

void PrefixScorer::Score(std::span<const ScoringCandidate> candidates,
                         const ScoringRequest& /*request*/, std::span<double> scores) {
  size_t longest = 0;
  for (const ScoringCandidate& c : candidates) longest = std::max(longest, c.matched_blocks);
  for (size_t i = 0; i < candidates.size(); ++i) {
    scores[i] = longest == 0 ? 0.0
                             : static_cast<double>(candidates[i].matched_blocks) /
                                   static_cast<double>(longest);
  }
}

}  // namespace strata::gateway
