#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "gateway/prefix_index.h"
#include "gateway/scorer.h"

namespace strata::gateway {

// What the gateway knows about one engine replica at one moment. Plain data: the scraper builds
// a new vector of these and publishes it whole, so a reader never sees a half-updated endpoint.
struct EndpointState {
  std::string id;         // unique and stable for the replica's life, e.g. "127.0.0.1:8001"
  bool ready = true;      // readiness probe passes (weights loaded)
  bool draining = false;  // scale-down in progress: no new requests
  bool healthy = true;    // not ejected after failures
  // Scraped from the replica's /metrics at `metrics_at` (TimePoint{} when never scraped).
  int64_t waiting = 0;
  int64_t running = 0;
  double kv_usage = 0.0;                     // fraction of KV-cache blocks in use, in [0, 1]
  std::vector<std::string> loaded_adapters;  // LoRA adapters resident in GPU memory
  TimePoint metrics_at{};
  // Its last scrape answered a page that is no reading (a request count out of range, such as
  // +Inf, NaN or 1e300; a malformed line): its load is unknown, and it counts as busier than the
  // busiest candidate whose figures are fresh, never as idle.
  bool metrics_unreadable = false;
  // LoRA adapters this replica may serve (from configuration); loading one may take time.
  std::vector<std::string> served_adapters;
  // Requests the gateway itself has sent and not yet seen finish: fresher than any scrape.
  int64_t in_flight = 0;
};

// The routing profiles the picker ships (presets of scorers, see scorer.h): "strata" (the default:
// the least estimated time to first token, with a load cap), "epp-default" (the Inference
// Extension's default: queue 2 + KV cache 2 + prefix 3, scraped figures only), "prefix-only"
// (longest prefix match, ties rotate), "least-request" (fewest waiting + running + in flight),
// "round-robin" (rotate over eligible endpoints) and "random" (uniform, seeded). The others
// exist as baselines for the simulator and benchmarks.
std::vector<std::string_view> PickerPresetNames();

// What a profile routes by: its weighted scorers, whether equal totals go to the less loaded
// endpoint (queued + running) before rotating, and whether it draws at random instead.
struct PickerProfile {
  std::string name;
  std::vector<WeightedScorer> scorers;
  bool ties_to_least_loaded = false;
  bool random = false;
};

// How long a scraped reading counts for a gateway that scrapes every `scrape_interval`: five
// intervals, and at least 500 ms. It is also how long one scrape may take, so a reading goes
// stale only after its successor has failed or timed out.
Duration MetricsLifetime(Duration scrape_interval);

struct PickerOptions {
  // The profile: a preset by name (PickerPresetNames), whose scorers `scorers` replaces when
  // not empty (weights settable in the gateway's config); with `scorers`, equal totals go to the
  // less loaded endpoint only when ties_to_least_loaded.
  std::string policy = "strata";
  std::vector<WeightedScorer> scorers;
  bool ties_to_least_loaded = false;
  uint64_t seed = 1;               // for "random"
  size_t prefix_block_bytes = 64;  // ~16 tokens of English text
  size_t prefix_blocks_per_endpoint = 65536;
  // Scraped figures older than this are ignored: only the gateway's own in-flight count and
  // configuration count then. A gateway sets it from its scrape interval (MetricsLifetime).
  Duration metrics_stale_after = std::chrono::milliseconds(500);
  // ttft-estimate (strata's scorer): the estimated time to first token on an endpoint, in units of
  // prompt blocks to prefill, is
  //   outstanding
  //   + mean_prefill * (unaccounted + running_share * running + kv_share * kv_usage
  //                     + lora_share * (adapter requested and not loaded))
  //   + (1 + miss_weight) * blocks of this prompt the endpoint has not cached
  // where `outstanding` is the uncached blocks of the requests this picker sent there whose
  // prefill has not finished (engines prefill first come, first served, so a new request waits
  // for all of them), less what the engine has done of the oldest since it started;
  // `unaccounted` counts requests queued there that this picker did not send (another picker's,
  // or sent before it started); mean_prefill is the running mean of the uncached blocks of the
  // requests this picker routed. The endpoint with the least estimate wins: affinity wins over
  // a queue when the cached prefix saves more than the queue costs.
  //
  // A block prefilled again costs more than this request's wait: it takes GPU time that the
  // requests arriving after it wait for, and it puts a second copy of the prefix into a cache
  // that is full, evicting blocks a later request would have found, while the first copy
  // stays where it was; miss_weight counts that, in units of the block's own prefill time.
  // 4 by default: a conversation's next turn leaves its prefix's replica mostly when that
  // replica is busy with someone's long prefill (4-8 s ahead), and it then recomputes its whole
  // history. On the Mooncake conversation trace (bench/serve/RESULTS.md) miss_weight 1 routed
  // 31.2 % of prompt blocks to a replica holding them while 33.0 % were held somewhere; 4
  // routes 32.7 % there and meets the hit-rate target with TTFT p90 still under half of
  // round-robin's; 6 and more buy 0.1-0.5 points of hits with TTFT p90 past it.
  double miss_weight = 4.0;
  // The estimate charges the miss weight on the blocks another endpoint holds that this one would
  // prefill again (a copy); the blocks no endpoint holds cost the same everywhere. Two cases
  // where a copy costs less (each at most miss_weight):
  // - shared_prefix_miss_weight, when two or more endpoints hold the longest match: the prefix
  //   is shared (a system prompt, a document), not one conversation's history, so the copy is
  //   read by the later requests that share it instead of evicting what they would find. 0: on
  //   the generated grid's `system` cells strata kept each shared prompt on the replicas that
  //   had it while round-robin spread the cold prefills, at a TTFT p90 0.01-0.13 s above
  //   round-robin's (bench/serve/RESULTS.md, "Change 3").
  // - idle_miss_weight, on an endpoint with nothing queued and no prefill of this picker's
  //   outstanding while at least one other endpoint is idle too: the copy starts at once, no
  //   request waits behind it (the next one still finds an idle endpoint), and only its cache
  //   cost remains. 2: half of the weight, whose other half prices the GPU time taken from the
  //   requests behind. Without the second idle endpoint the weight lost overloaded `conv` rows
  //   and 0.7 points of the Mooncake trace's hits; 1 lost a row of the grid, 3 gained fewer.
  //   Together: 42 -> 49 of 72 grid rows meet all three targets, none lost; the Mooncake trace's
  //   hit rate falls 0.3 points (32.97 -> 32.69 %, under its 32.9 % target), its TTFT p90 6.08 ->
  //   5.98 s.
  double shared_prefix_miss_weight = 0.0;
  double idle_miss_weight = 2.0;
  // Sequences already in the batch mostly decode, which delays a new prefill little (a decode
  // step is ~1-2 % of an 8,192-token prefill chunk): 0 by default. Pricing them (0.02-0.1 of a
  // mean prefill each) moved TPOT p90 by 1-5 % and TTFT within noise on the Azure and Mooncake
  // traces.
  double running_share = 0;
  // The engines' KV usage counts the blocks their running sequences hold. It stayed under 50 %
  // on the Mooncake trace, where a term of one mean prefill per full cache only added noise
  // (TTFT p90 +0.1 s). 0 by default.
  double kv_share = 0;
  double lora_share = 1.0;
  // ttft-estimate: an endpoint whose load (queued + running) exceeds the eligible endpoints' mean
  // by more than max(load_cap_min_excess, load_cap_ratio * mean) gets no prefix or LoRA credit,
  // so affinity cannot pile requests onto a saturated replica. The cap is relative, so it holds
  // when the whole fleet is overloaded. A full KV cache takes no credit away (it did at 95 %
  // until issue 24): under overload every cache is full, and a turn sent away from its prefix
  // recomputes it into another full cache and deepens the overload (bench/serve/RESULTS.md,
  // generated grid: hit rate 46 % -> 58 % at 80 % reuse, load 0.8).
  double load_cap_ratio = 1.0;
  int64_t load_cap_min_excess = 4;
  // ttft-estimate: an engine's prefill time per prompt block (64 bytes ~ 16 tokens at the 8b-h100
  // profile's 250 us per token), to count the part of an endpoint's oldest outstanding prefill
  // already done; 0: none counted.
  double prefill_seconds_per_block = 0.004;
  // ttft-estimate: what a new prefill costs the sequences already decoding there. An engine step
  // that holds a prefill chunk takes the chunk's time plus a fixed overhead, and every running
  // sequence waits for it to get its next token, so routing a request to an endpoint stalls
  // `running` decoders by
  //   running * (this prompt's uncached blocks
  //              + prefill_overhead_seconds / prefill_seconds_per_block, unless a prefill this
  //                picker sent is still outstanding there: the new one then shares its step)
  // and the estimate adds decode_stall_weight times that, in the same units. One decoder's
  // stall weighs less than this request's own wait (a TPOT objective spreads it over the
  // decoder's output tokens), and more than nothing: with 0 (issue 24's baseline) the picker
  // spread prefills one per step over every replica, so each step of every batch carried a
  // prefill's overhead, and on the generated grid's low-reuse cells at loads 1.0-1.5 strata's
  // goodput fell to 0.77-0.90x epp-default's on TPOT alone. 0.1 (bench/serve/RESULTS.md,
  // "Change 2"): rows meeting all three targets 39 -> 42 of 72 (poisson decode at load 1.5:
  // 0.77x -> 0.98x). 0.2 met the TPOT target on 70 rows (64 at 0.1) but lost TTFT p90 on 7
  // (by 3-10 %) and the Mooncake trace's TTFT p90 and hit-rate targets.
  double decode_stall_weight = 0.1;
  // The fixed part of an engine step that prefills (8b-h100: 30 ms); `strata sim serve` sets it
  // from its engine profile.
  double prefill_overhead_seconds = 0.03;
};

// Why the picker chose an endpoint, for metrics (`strata_gateway_picks_total{reason=...}`).
enum class PickReason {
  kPrefixAffinity,  // the chosen endpoint had the longest prefix match
  kLoraAffinity,    // the chosen endpoint had the requested adapter loaded
  kLoadCapped,      // a longer prefix match existed on an endpoint over the load cap
  kLeastLoaded,     // load and KV usage decided
  kRoundRobin,
  kRandom,
};

// "prefix", "lora", "load-cap", "least-loaded", "round-robin", "random".
std::string_view PickReasonName(PickReason reason);

// The profile `options` route by: the preset named by `options.policy`, with `options.scorers`
// in place of its scorers when given. InvalidArgument naming the unknown preset or scorer, or a
// negative weight.
Result<PickerProfile> ResolvePickerProfile(const PickerOptions& options);

struct PickRequest {
  // The text whose prefix engines cache (the prompt, or the chat messages rendered in order).
  std::string_view prompt;
  // Precomputed chained block hashes (the simulator has token blocks, not text). When not
  // empty, used instead of hashing `prompt`.
  std::span<const uint64_t> block_hashes;
  // The LoRA adapter asked for, or empty for the base model.
  std::string_view adapter;
  // Endpoints not to use (already failed for this request).
  std::span<const std::string> excluded_ids;
};

struct PickResult {
  size_t index = 0;  // into the endpoint span given to Pick
  PickReason reason = PickReason::kLeastLoaded;
  size_t matched_blocks = 0;  // prefix blocks the chosen endpoint probably has cached
  size_t total_blocks = 0;    // complete blocks in the prompt
  // Names this request's prefill for PrefillDone when a scorer uses outstanding prefill (0
  // otherwise).
  uint64_t ticket = 0;
};

// The endpoint picker: a pure, synchronous routing policy over a snapshot of endpoint states.
// Filters (ready, not draining, healthy, not excluded, adapter servable), then scores. Time
// enters only as the `now` argument, so the simulator drives it in virtual time. It remembers
// only what it routed (prefix index, round-robin position, random state).
//
// One Picker per routing history (one per model version in the gateway, shared by its event
// loops under a mutex; one per simulation); not thread-safe, except BlockHashes.
class Picker {
 public:
  // REQUIRES: ResolvePickerProfile(options) succeeds.
  explicit Picker(PickerOptions options);

  // Chooses one endpoint of `endpoints` for `request` and records the choice in the prefix
  // index. Returns kUnavailable, saying how many endpoints each filter removed, when no
  // endpoint is eligible (including when `endpoints` is empty).
  Result<PickResult> Pick(std::span<const EndpointState> endpoints, const PickRequest& request,
                          TimePoint now);

  // The chained block hashes Pick computes for `prompt` when given none (empty for policies
  // that ignore prefixes), for a caller that hashes before taking the lock it shares the
  // picker under. Reads only the options: safe from any thread.
  std::vector<uint64_t> BlockHashes(std::string_view prompt) const;

  // Tells the picker that the request it routed to `endpoint_id` with `ticket` has its first
  // token (or failed, or was cancelled) at `now`: its prefill no longer delays the requests sent
  // there. An unknown ticket is ignored. Without this call a request's prefill counts until the
  // endpoint's in-flight count (EndpointState::in_flight) drops below the requests this picker
  // still holds for it; the oldest are let go first.
  void PrefillDone(std::string_view endpoint_id, uint64_t ticket, TimePoint now);

  // Drops the prefix history and outstanding prefills of an endpoint that left the set or
  // restarted.
  void ForgetEndpoint(std::string_view endpoint_id);

  const PickerOptions& options() const { return options_; }
  const PickerProfile& profile() const { return profile_; }
  const PrefixIndex& prefix_index() const { return prefix_index_; }

 private:
  using Candidate = ScoringCandidate;

  // A request this picker sent to an endpoint whose first token has not been reported.
  struct Outstanding {
    uint64_t ticket;
    double blocks;  // uncached prompt blocks estimated at pick time
    TimePoint routed_at;
  };
  struct EndpointWork {
    std::deque<Outstanding> pending;  // in routing order: the engine serves the oldest first
    TimePoint last_done{};            // the last PrefillDone: the next prefill started then
  };

  // Lets go of the oldest outstanding prefills of endpoints whose in-flight count says fewer
  // requests are left there than this picker holds.
  void TrimToInFlight(std::span<const EndpointState> endpoints);
  // The blocks of outstanding prefill still to do on `endpoint_id` at `now`, and how many
  // requests they belong to.
  std::pair<double, int64_t> OutstandingWork(std::string_view endpoint_id, TimePoint now) const;

  // Counts each candidate whose metrics are unreadable as one request busier than the busiest
  // candidate with fresh figures (its own in-flight requests when more), with the highest KV
  // usage among them. Changes nothing when no candidate has fresh figures.
  void AssumeUnreadableBusiest(std::span<const EndpointState> endpoints, TimePoint now,
                               std::vector<Candidate>* candidates) const;
  // Whether `endpoint`'s scraped figures are recent enough to route by.
  bool Fresh(const EndpointState& endpoint, TimePoint now) const;
  // Fills `candidates` with the endpoints that pass the filters, or says why none does.
  Status Eligible(std::span<const EndpointState> endpoints, const PickRequest& request,
                  TimePoint now, std::span<const uint64_t> hashes,
                  std::vector<Candidate>* candidates) const;
  // The highest weighted total of the profile's scorers.
  PickResult ChooseByScore(const std::vector<Candidate>& candidates, const ScoringRequest& request);
  // Why `chosen` won, given every candidate's match and whether each was over the load cap.
  static PickReason Explain(const std::vector<Candidate>& candidates, const Candidate& chosen,
                            const std::vector<bool>& capped, bool lora_requested);
  // Index into `tied` of the one to take, rotating so equal endpoints share the load.
  size_t BreakTie(size_t tied_count);

  PickerOptions options_;
  PickerProfile profile_;
  std::vector<std::unique_ptr<Scorer>> scorers_;  // profile_.scorers' scorers, in order
  bool uses_prefix_ = false;
  bool uses_outstanding_ = false;
  bool measures_load_ = false;
  bool considers_adapters_ = false;
  PrefixIndex prefix_index_;
  uint64_t rotation_ = 0;
  // With a scorer that uses it: outstanding prefills by endpoint id, looked up by string_view
  // (std::less<>) on the pick path, allocating nothing.
  std::map<std::string, EndpointWork, std::less<>> work_;
  uint64_t next_ticket_ = 1;
  std::mt19937_64 random_;
  // Pick's working space, kept from pick to pick so that a pick does not allocate.
  std::vector<Candidate> candidates_;
  std::vector<bool> capped_;
  std::vector<double> totals_;
  std::vector<double> scores_;
  std::vector<size_t> tied_;
};

}  // namespace strata::gateway
