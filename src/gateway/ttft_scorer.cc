#include "gateway/ttft_scorer.h"

#include <algorithm>

#include "gateway/picker.h"

namespace strata::gateway {

TtftScorer::TtftScorer(const PickerOptions& options)
    : miss_weight_(options.miss_weight),
      shared_prefix_miss_weight_(std::min(options.shared_prefix_miss_weight, options.miss_weight)),
      idle_miss_weight_(std::min(options.idle_miss_weight, options.miss_weight)),
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
  // The longest prefix an endpoint under the cap holds, and how many endpoints (capped or not)
  // hold all of it.
  size_t longest = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const ScoringCandidate& c = candidates[i];
    capped_[i] = static_cast<double>(c.queued + c.running) - mean_load > allowed_excess;
    if (!capped_[i]) longest = std::max(longest, c.matched_blocks);
  }
  int holders = 0;
  int idle = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const ScoringCandidate& c = candidates[i];
    holders += longest > 0 && c.matched_blocks == longest;
    idle += c.queued == 0 && c.outstanding_requests == 0;
  }
  // A prefix two endpoints already hold is shared (a system prompt, a document), not one
  // conversation's history: another copy is read by the later requests that share it, so it
  // costs its prefill and no eviction.
  const double miss_weight = holders >= 2 ? shared_prefix_miss_weight_ : miss_weight_;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const ScoringCandidate& c = candidates[i];
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
    // The blocks another endpoint holds that this one would prefill again. Pricing these rather
    // than every uncached block ranks the same under one weight (they differ by the blocks no
    // endpoint holds), and lets the weight differ by endpoint.
    const double copied = static_cast<double>(longest - std::min(cached, longest));
    // An endpoint with nothing queued and no prefill of this picker's outstanding starts the
    // copy at once, and while another endpoint is idle too the next request still finds one:
    // no request waits behind the copy, and only its cache cost remains.
    const bool copy_delays_none = idle >= 2 && c.queued == 0 && c.outstanding_requests == 0;
    const double weight = copy_delays_none ? std::min(miss_weight, idle_miss_weight_) : miss_weight;
    // Every sequence decoding there waits for this prefill's step; a prefill already waiting
    // there shares the step's overhead.
    const double stall = static_cast<double>(c.running) *
                         (uncached + (c.outstanding_requests > 0 ? 0.0 : overhead_blocks_));
    scores[i] = -(c.outstanding_blocks + per_request * requests_ahead + uncached + weight * copied +
                  decode_stall_weight_ * stall);
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
