#pragma once

#include <vector>

#include "gateway/scorer.h"

namespace strata::gateway {

struct PickerOptions;

// strata's scorer: minus the estimated time to first token on each endpoint, in units of prompt
// blocks to prefill (the cost model of PickerOptions: the prefill this picker sent there and
// that is not done, the queued requests it did not send at the mean prefill, this prompt's
// uncached blocks, and miss_weight (or the shared-prefix or idle weight) times the blocks another
// endpoint holds that this one would prefill again; an endpoint over the load cap gets no prefix
// or LoRA credit), plus decode_stall_weight times the stall its prefill puts on
// the sequences decoding there. Keeps the running mean of the uncached
// blocks routed, updated by Chosen. Owned by one Picker; not thread-safe.
class TtftScorer final : public Scorer {
 public:
  explicit TtftScorer(const PickerOptions& options);

  std::string_view name() const override { return "ttft-estimate"; }
  void Score(std::span<const ScoringCandidate> candidates, const ScoringRequest& request,
             std::span<double> scores) override;
  void Chosen(const ScoringCandidate& chosen, const ScoringRequest& request) override;
  bool MeasuresLoad() const override { return true; }
  bool UsesPrefix() const override { return true; }
  bool UsesOutstandingPrefill() const override { return true; }
  bool ConsidersAdapters() const override { return true; }
  bool Capped(size_t i) const override { return i < capped_.size() && capped_[i]; }

 private:
  double miss_weight_;
  double shared_prefix_miss_weight_;
  double idle_miss_weight_;
  double running_share_;
  double kv_share_;
  double lora_share_;
  double decode_stall_weight_;
  // prefill_overhead_seconds in blocks of prefill (0 when a block's time is not known).
  double overhead_blocks_;
  double load_cap_ratio_;
  int64_t load_cap_min_excess_;
  // The running mean of the uncached prompt blocks of routed requests; 0 until the first prompt
  // with blocks.
  double mean_prefill_blocks_ = 0;
  std::vector<bool> capped_;
};

}  // namespace strata::gateway
