#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::gateway {

// The picker's extension point (the Inference Extension's scorer plugins): each scorer gives
// every eligible endpoint a score, the picker adds them up with the weights its profile gives
// (PickerOptions::scorers, settable in the gateway's config) and routes to the highest total.
// One file per scorer.

// One endpoint that passed the picker's filters, as the scorers see it. Plain data, built by the
// picker for each pick.
struct ScoringCandidate {
  size_t index = 0;             // into the endpoint span given to Picker::Pick
  int64_t scraped_queue = 0;    // waiting + running at the last fresh scrape (0 when stale)
  int64_t in_flight = 0;        // requests the gateway sent there and has not seen finish
  int64_t queued = 0;           // sent and not yet in the batch: max(waiting, in-flight - running)
  int64_t running = 0;          // in the batch at the last fresh scrape
  double kv_usage = 0.5;        // at the last fresh scrape, in [0, 1]; 0.5 when unknown (stale)
  bool adapter_loaded = false;  // the requested LoRA adapter is resident there
  size_t matched_blocks = 0;    // prompt blocks the endpoint probably has cached
  double outstanding_blocks = 0;     // prefill this picker sent there and is not yet done
  int64_t outstanding_requests = 0;  // the requests that prefill belongs to
};

// What the scorers know of the request being routed.
struct ScoringRequest {
  size_t total_blocks = 0;  // complete prompt blocks
  bool lora_requested = false;
};

// A scorer. Scores need not be normalised, but the picker adds them up, so a scorer meant to be
// combined with others gives values in [0, 1] (the Inference Extension's convention); the
// picker's tie tolerance is relative to the best total. Owned by one Picker; not thread-safe.
class Scorer {
 public:
  virtual ~Scorer() = default;

  // "prefix", "queue", "load", "kv-cache" or "ttft-estimate".
  virtual std::string_view name() const = 0;

  // Writes one score per candidate into `scores` (the same size as `candidates`); higher is
  // better.
  virtual void Score(std::span<const ScoringCandidate> candidates, const ScoringRequest& request,
                     std::span<double> scores) = 0;

  // Tells the scorer which candidate was routed to, after the last Score call.
  virtual void Chosen(const ScoringCandidate& /*chosen*/, const ScoringRequest& /*request*/) {}

  // True when the scores follow the endpoints' load, so that equal totals mean equal load (a
  // profile with no such scorer routes ties round-robin, and says so).
  virtual bool MeasuresLoad() const { return false; }
  // True when the scores use prompt blocks (the picker then hashes prompts and records them in
  // its prefix index).
  virtual bool UsesPrefix() const { return false; }
  // True when the scores weigh whether the requested LoRA adapter is loaded (a pick that
  // follows a loaded adapter is then reported as kLoraAffinity).
  virtual bool ConsidersAdapters() const { return false; }
  // True when the scores use the outstanding prefill of each endpoint (the picker then keeps
  // it, and names each request's prefill with a ticket for Picker::PrefillDone).
  virtual bool UsesOutstandingPrefill() const { return false; }
  // After Score: whether candidate `i` was denied its affinity credit for being overloaded (a
  // longer match there is then reported as kLoadCapped).
  virtual bool Capped(size_t /*i*/) const { return false; }
};

// A scorer and its weight in a profile.
struct WeightedScorer {
  std::string name;
  double weight = 1.0;

  bool operator==(const WeightedScorer&) const = default;
};

// The scorer names MakeScorer accepts.
std::vector<std::string_view> ScorerNames();

struct PickerOptions;

// The scorer called `name`, configured from `options` (ttft-estimate reads its cost model
// there). InvalidArgument listing the names otherwise.
Result<std::unique_ptr<Scorer>> MakeScorer(std::string_view name, const PickerOptions& options);

}  // namespace strata::gateway
