#include "gateway/ttft_scorer.h"

#include <algorithm>

#include "gateway/picker.h"

namespace strata::gateway {

TtftScorer::TtftScorer(const PickerOptions& options)
    : miss_weight_(options.miss_weight),
      running_share_(options.running_share),
      kv_share_(options.kv_share),
      lora_share_(options.lora_share),
      decode_stall_weight_(options.decode_stall_weight),
      overhead_blocks_(options.prefill_seconds_per_block > 0
                           ? options.prefill_overhead_seconds / options.prefill_seconds_per_block
                           : 0),
      load_cap_ratio_(options.load_cap_ratio),
      load_cap_min_excess_(options.load_cap_min_excess) {}

void TtftScorer::Score(std::span<const ScoringCandidate> candidates, const ScoringRequest& request,
                       std::span<double> scores) {
  double mean_load = 0;
  for (const ScoringCandidate& c : candidates) {
    mean_load += static_cast<double>(c.queued + c.running);
  }
  mean_load /= static_cast<double>(candidates.size());
  const double allowed_excess =
      std::max(static_cast<double>(load_cap_min_excess_), load_cap_ratio_ * mean_load);
  // One queued request ahead costs about what the picker has been sending on average.
  const double per_request = std::max(mean_prefill_blocks_, 1.0);
  capped_.assign(candidates.size(), false);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const ScoringCandidate& c = candidates[i];
    capped_[i] = static_cast<double>(c.queued + c.running) - mean_load > allowed_excess;
    const size_t cached = capped_[i] ? 0 : c.matched_blocks;
    // Queued requests this picker did not send are priced at the mean prefill.
    const double unaccounted =
        static_cast<double>(std::max<int64_t>(c.queued - c.outstanding_requests, 0));
    double requests_ahead =
        unaccounted + running_share_ * static_cast<double>(c.running) + kv_share_ * c.kv_usage;
    if (request.lora_requested && (capped_[i] || !c.adapter_loaded)) {
      requests_ahead += lora_share_;
    }
    const double uncached = static_cast<double>(request.total_blocks - cached);
    // Every sequence decoding there waits for this prefill's step; a prefill already waiting
    // there shares the step's overhead.
    const double stall = static_cast<double>(c.running) *
                         (uncached + (c.outstanding_requests > 0 ? 0.0 : overhead_blocks_));
    scores[i] = -(c.outstanding_blocks + per_request * requests_ahead +
                  (1.0 + miss_weight_) * uncached + decode_stall_weight_ * stall);
  }
}

void TtftScorer::Chosen(const ScoringCandidate& chosen, const ScoringRequest& request) {
  if (request.total_blocks == 0) return;
  const double uncached = static_cast<double>(request.total_blocks - chosen.matched_blocks);
  // A slow running mean: it prices the queue, which holds requests routed over many picks.
  constexpr double kMeanWeight = 1.0 / 32;
  mean_prefill_blocks_ =
      mean_prefill_blocks_ == 0
          ? uncached
          : mean_prefill_blocks_ + kMeanWeight * (uncached - mean_prefill_blocks_);
}

}  // namespace strata::gateway
