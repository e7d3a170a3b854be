#pragma once

#include "gateway/scorer.h"

namespace strata::gateway {

// The Inference Extension's prefix-cache scorer: the prompt blocks an endpoint probably has
// cached (the picker's prefix index), over the longest such match among the candidates; 0 for
// all when none matches. Stateless.
class PrefixScorer final : public Scorer {
 public:
  std::string_view name() const override { return "prefix"; }
  void Score(std::span<const ScoringCandidate> candidates, const ScoringRequest& request,
             std::span<double> scores) override;
  bool UsesPrefix() const override { return true; }
};

}  // namespace strata::gateway
