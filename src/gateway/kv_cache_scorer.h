#pragma once

#include "gateway/scorer.h"

namespace strata::gateway {

// The Inference Extension's KV-cache utilisation scorer: 1 - the endpoint's KV-cache usage at
// the last fresh scrape (0.5 when stale). Stateless.
class KvCacheScorer final : public Scorer {
 public:
  std::string_view name() const override { return "kv-cache"; }
  void Score(std::span<const ScoringCandidate> candidates, const ScoringRequest& request,
             std::span<double> scores) override;
  bool MeasuresLoad() const override { return true; }
};

}  // namespace strata::gateway
