#include "gateway/kv_cache_scorer.h"

namespace strata::gateway {

void KvCacheScorer::Score(std::span<const ScoringCandidate> candidates,
                          const ScoringRequest& /*request*/, std::span<double> scores) {
  for (size_t i = 0; i < candidates.size(); ++i) scores[i] = 1.0 - candidates[i].kv_usage;
}

}  // namespace strata::gateway
