#pragma once

#include "gateway/scorer.h"

namespace strata::gateway {

// The Inference Extension's queue scorer: 1 for the candidate with the shortest queue, 0 for the
// longest, linear between (all 1 when equal). "queue" counts what the engines reported at the
// last fresh scrape (waiting + running), as the Inference Extension does; "load" adds the
// requests the gateway has in flight there, which is fresher (least-request). Stateless.
class QueueScorer final : public Scorer {
 public:
  explicit QueueScorer(bool count_in_flight) : count_in_flight_(count_in_flight) {}

  std::string_view name() const override { return count_in_flight_ ? "load" : "queue"; }
  void Score(std::span<const ScoringCandidate> candidates, const ScoringRequest& request,
             std::span<double> scores) override;
  bool MeasuresLoad() const override { return true; }

 private:
  bool count_in_flight_;
};

}  // namespace strata::gateway
