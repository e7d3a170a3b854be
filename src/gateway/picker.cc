#include "gateway/picker.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

#include "common/check.h"

namespace strata::gateway {
namespace {

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The presets, as profiles.
std::vector<PickerProfile> Presets() {
  return {
      {"strata", {{"ttft-estimate", 1.0}}, /*ties_to_least_loaded=*/true, false},
      {"epp-default", {{"queue", 2.0}, {"kv-cache", 2.0}, {"prefix", 3.0}}, false, false},
      {"prefix-only", {{"prefix", 1.0}}, false, false},
      {"least-request", {{"load", 1.0}}, false, false},
      {"round-robin", {}, false, false},
      {"random", {}, false, /*random=*/true},
  };
}

}  // namespace

Duration MetricsLifetime(Duration scrape_interval) {
  return std::max<Duration>(scrape_interval * 5, std::chrono::milliseconds(500));
}

std::vector<std::string_view> PickerPresetNames() {
  return {"strata", "epp-default", "prefix-only", "least-request", "round-robin", "random"};
}

Result<PickerProfile> ResolvePickerProfile(const PickerOptions& options) {
  std::optional<PickerProfile> profile;
  for (PickerProfile& preset : Presets()) {
    if (preset.name == options.policy) profile = std::move(preset);
  }
  if (!profile) {
    return Err(InvalidArgumentError(fmt::format(
        "unknown picker policy \"{}\" (expected strata, epp-default, prefix-only, least-request, "
        "round-robin or random)",
        options.policy)));
  }
  if (!options.scorers.empty()) {
    profile->scorers = options.scorers;
    profile->ties_to_least_loaded = options.ties_to_least_loaded;
    profile->random = false;
  }
  for (size_t i = 0; i < profile->scorers.size(); ++i) {
    const WeightedScorer& scorer = profile->scorers[i];
    Result<std::unique_ptr<Scorer>> made = MakeScorer(scorer.name, options);
    if (!made) return Err(made.error().WithPrefix(fmt::format("scorers[{}].name", i)));
    if (!(scorer.weight >= 0)) {
      return Err(InvalidArgumentError(fmt::format("scorers[{}].weight: must be >= 0", i)));
    }
  }
  return *profile;
}

std::string_view PickReasonName(PickReason reason) {
  switch (reason) {
    case PickReason::kPrefixAffinity:
      return "prefix";
    case PickReason::kLoraAffinity:
      return "lora";
    case PickReason::kLoadCapped:
      return "load-cap";
    case PickReason::kLeastLoaded:
      return "least-loaded";
    case PickReason::kRoundRobin:
      return "round-robin";
    case PickReason::kRandom:
      return "random";
  }
  return "unknown";
}

Picker::Picker(PickerOptions options)
    : options_(std::move(options)),
      prefix_index_(options_.prefix_block_bytes, options_.prefix_blocks_per_endpoint),
      random_(options_.seed) {
  Result<PickerProfile> profile = ResolvePickerProfile(options_);
  STRATA_CHECK(profile.has_value());
  profile_ = std::move(*profile);
  for (const WeightedScorer& weighted : profile_.scorers) {
    Result<std::unique_ptr<Scorer>> scorer = MakeScorer(weighted.name, options_);
    STRATA_CHECK(scorer.has_value());
    uses_prefix_ = uses_prefix_ || (*scorer)->UsesPrefix();
    uses_outstanding_ = uses_outstanding_ || (*scorer)->UsesOutstandingPrefill();
    measures_load_ = measures_load_ || (*scorer)->MeasuresLoad();
    considers_adapters_ = considers_adapters_ || (*scorer)->ConsidersAdapters();
    scorers_.push_back(std::move(*scorer));
  }
}

Status Picker::Eligible(std::span<const EndpointState> endpoints, const PickRequest& request,
                        TimePoint now, std::span<const uint64_t> hashes,
                        std::vector<Candidate>* candidates) const {
  candidates->clear();
  int not_ready = 0, draining = 0, unhealthy = 0, excluded = 0, no_adapter = 0;
  bool any_unreadable = false;
  for (size_t i = 0; i < endpoints.size(); ++i) {
    const EndpointState& endpoint = endpoints[i];
    if (!endpoint.ready) {
      ++not_ready;
      continue;
    }
    if (endpoint.draining) {
      ++draining;
      continue;
    }
    if (!endpoint.healthy) {
      ++unhealthy;
      continue;
    }
    if (std::find(request.excluded_ids.begin(), request.excluded_ids.end(), endpoint.id) !=
        request.excluded_ids.end()) {
      ++excluded;
      continue;
    }
    const bool fresh = Fresh(endpoint, now);
    const bool loaded =
        fresh && !request.adapter.empty() && Contains(endpoint.loaded_adapters, request.adapter);
    if (!request.adapter.empty() && !loaded &&
        !Contains(endpoint.served_adapters, request.adapter)) {
      ++no_adapter;
      continue;
    }
    Candidate candidate;
    candidate.index = i;
    candidate.scraped_queue = fresh ? endpoint.waiting + endpoint.running : 0;
    candidate.in_flight = endpoint.in_flight;
    // What the gateway sent since the scrape is not in the scraped figures yet: the in-flight
    // requests beyond those the engine was running are queued.
    candidate.queued = fresh ? std::max(endpoint.waiting, endpoint.in_flight - endpoint.running)
                             : endpoint.in_flight;
    candidate.running = fresh ? endpoint.running : 0;
    candidate.kv_usage = fresh ? std::clamp(endpoint.kv_usage, 0.0, 1.0) : 0.5;
    candidate.adapter_loaded = loaded;
    candidate.matched_blocks = prefix_index_.MatchLength(endpoint.id, hashes);
    std::tie(candidate.outstanding_blocks, candidate.outstanding_requests) =
        OutstandingWork(endpoint.id, now);
    candidates->push_back(candidate);
    any_unreadable |= endpoint.metrics_unreadable;
  }
  if (any_unreadable) AssumeUnreadableBusiest(endpoints, now, candidates);
  if (candidates->empty()) {
    return UnavailableError(fmt::format(
        "0/{} endpoints eligible: {} not ready, {} draining, {} unhealthy, {} already failed, "
        "{} without adapter \"{}\"",
        endpoints.size(), not_ready, draining, unhealthy, excluded, no_adapter, request.adapter));
  }
  return Status::Ok();
}
bool Picker::Fresh(const EndpointState& endpoint, TimePoint now) const {
  return endpoint.metrics_at != TimePoint{} &&
         now - endpoint.metrics_at <= options_.metrics_stale_after;
}

void Picker::AssumeUnreadableBusiest(std::span<const EndpointState> endpoints, TimePoint now,
                                     std::vector<Candidate>* candidates) const {
  // Without a bound an unreadable figure is not a low one: an engine reporting +Inf waiting
  // requests is saturated, not idle.
  bool known = false;
  Candidate busiest;
  busiest.kv_usage = 0;
  for (const Candidate& c : *candidates) {
    const EndpointState& endpoint = endpoints[c.index];
    if (endpoint.metrics_unreadable || !Fresh(endpoint, now)) continue;
    known = true;
    // With what the gateway has in flight there: least-request adds it to the queue, and a
    // reply reaches its client a moment before the gateway counts it done.
    busiest.scraped_queue = std::max(busiest.scraped_queue, c.scraped_queue + c.in_flight);
    busiest.queued = std::max(busiest.queued, c.queued);
    busiest.running = std::max(busiest.running, c.running);
    busiest.kv_usage = std::max(busiest.kv_usage, c.kv_usage);
  }
  if (!known) return;
  for (Candidate& c : *candidates) {
    if (!endpoints[c.index].metrics_unreadable) continue;
    c.scraped_queue = busiest.scraped_queue + 1;
    c.queued = std::max(busiest.queued + 1, c.in_flight);
    c.running = busiest.running;
    c.kv_usage = busiest.kv_usage;
  }
}

void Picker::TrimToInFlight(std::span<const EndpointState> endpoints) {
  for (const EndpointState& endpoint : endpoints) {
    auto it = work_.find(endpoint.id);
    if (it == work_.end()) continue;
    std::deque<Outstanding>& pending = it->second.pending;
    const size_t in_flight = static_cast<size_t>(std::max<int64_t>(endpoint.in_flight, 0));
    while (pending.size() > in_flight) pending.pop_front();
  }
}

std::pair<double, int64_t> Picker::OutstandingWork(std::string_view endpoint_id,
                                                   TimePoint now) const {
  auto it = work_.find(endpoint_id);
  if (it == work_.end() || it->second.pending.empty()) return {0.0, 0};
  const EndpointWork& work = it->second;
  double blocks = 0;
  for (const Outstanding& outstanding : work.pending) blocks += outstanding.blocks;
  if (options_.prefill_seconds_per_block > 0) {
    // The oldest has been prefilling since it arrived or since the one before it was done,
    // whichever is later. Counting no more than its own size keeps an engine slower than
    // modelled from looking idle.
    const Outstanding& oldest = work.pending.front();
    const double elapsed = ToSeconds(now - std::max(oldest.routed_at, work.last_done));
    blocks -= std::clamp(elapsed / options_.prefill_seconds_per_block, 0.0, oldest.blocks);
  }
  return {blocks, static_cast<int64_t>(work.pending.size())};
}

void Picker::PrefillDone(std::string_view endpoint_id, uint64_t ticket, TimePoint now) {
  auto it = work_.find(endpoint_id);
  if (it == work_.end()) return;
  std::deque<Outstanding>& pending = it->second.pending;
  auto found = std::find_if(pending.begin(), pending.end(),
                            [&](const Outstanding& o) { return o.ticket == ticket; });
  if (found == pending.end()) return;
  pending.erase(found);
  it->second.last_done = now;
}

void Picker::ForgetEndpoint(std::string_view endpoint_id) {
  prefix_index_.Forget(endpoint_id);
  work_.erase(std::string(endpoint_id));
}

size_t Picker::BreakTie(size_t tied_count) { return rotation_++ % tied_count; }

PickReason Picker::Explain(const std::vector<Candidate>& candidates, const Candidate& chosen,
                           const std::vector<bool>& capped, bool lora_requested) {
  size_t best_match_anywhere = 0;
  bool longer_match_was_capped = false;
  for (size_t i = 0; i < candidates.size(); ++i) {
    best_match_anywhere = std::max(best_match_anywhere, candidates[i].matched_blocks);
    if (candidates[i].matched_blocks > chosen.matched_blocks && capped[i]) {
      longer_match_was_capped = true;
    }
  }
  if (chosen.matched_blocks > 0 && chosen.matched_blocks == best_match_anywhere) {
    return PickReason::kPrefixAffinity;
  }
  if (longer_match_was_capped) return PickReason::kLoadCapped;
  if (lora_requested && chosen.adapter_loaded) return PickReason::kLoraAffinity;
  return PickReason::kLeastLoaded;
}

PickResult Picker::ChooseByScore(const std::vector<Candidate>& candidates,
                                 const ScoringRequest& request) {
  std::vector<double>& totals = totals_;
  std::vector<double>& scores = scores_;
  std::vector<bool>& capped = capped_;
  totals.assign(candidates.size(), 0.0);
  capped.assign(candidates.size(), false);
  for (size_t k = 0; k < scorers_.size(); ++k) {
    scores.assign(candidates.size(), 0.0);
    scorers_[k]->Score(candidates, request, scores);
    const double weight = profile_.scorers[k].weight;
    for (size_t i = 0; i < candidates.size(); ++i) {
      totals[i] += weight * scores[i];
      capped[i] = capped[i] || scorers_[k]->Capped(i);
    }
  }
  const double best = *std::max_element(totals.begin(), totals.end());
  // Totals are sums of a few doubles: equal within a relative tolerance is a tie.
  const double tolerance = 1e-9 * std::max(1.0, std::abs(best));
  std::vector<size_t>& tied = tied_;
  tied.clear();
  int64_t least_load = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (best - totals[i] > tolerance) continue;
    if (profile_.ties_to_least_loaded) {
      // Equal totals: the less loaded endpoint, so that ties spread the load.
      const int64_t load = candidates[i].queued + candidates[i].running;
      if (load < least_load) {
        least_load = load;
        tied.clear();
      }
      if (load > least_load) continue;
    }
    tied.push_back(i);
  }
  const Candidate& chosen = candidates[tied[BreakTie(tied.size())]];
  for (const std::unique_ptr<Scorer>& scorer : scorers_) scorer->Chosen(chosen, request);
  PickResult result;
  result.index = chosen.index;
  result.matched_blocks = chosen.matched_blocks;
  result.reason =
      Explain(candidates, chosen, capped, request.lora_requested && considers_adapters_);
  // A profile blind to load rotates among equals.
  if (!measures_load_ && result.reason == PickReason::kLeastLoaded) {
    result.reason = PickReason::kRoundRobin;
  }
  return result;
}

std::vector<uint64_t> Picker::BlockHashes(std::string_view prompt) const {
  if (!uses_prefix_) return {};
  return PrefixIndex::HashBlocks(prompt, options_.prefix_block_bytes);
}

Result<PickResult> Picker::Pick(std::span<const EndpointState> endpoints,
                                const PickRequest& request, TimePoint now) {
  std::vector<uint64_t> computed;
  std::span<const uint64_t> hashes = request.block_hashes;
  if (hashes.empty()) {
    computed = BlockHashes(request.prompt);
    hashes = computed;
  }
  if (!uses_prefix_) hashes = {};
  if (uses_outstanding_) TrimToInFlight(endpoints);
  std::vector<Candidate>& candidates = candidates_;
  RETURN_IF_ERROR(Eligible(endpoints, request, now, hashes, &candidates));

  PickResult result;
  if (profile_.random) {
    std::uniform_int_distribution<size_t> uniform(0, candidates.size() - 1);
    result.index = candidates[uniform(random_)].index;
    result.reason = PickReason::kRandom;
  } else {
    ScoringRequest scoring;
    scoring.total_blocks = hashes.size();
    scoring.lora_requested = !request.adapter.empty();
    result = ChooseByScore(candidates, scoring);
    const std::string& id = endpoints[result.index].id;
    if (uses_prefix_) prefix_index_.Record(id, hashes);
    if (uses_outstanding_) {
      result.ticket = next_ticket_++;
      work_[id].pending.push_back(
          {result.ticket, static_cast<double>(hashes.size() - result.matched_blocks), now});
    }
  }
  result.total_blocks = hashes.size();
  return result;
}

}  // namespace strata::gateway
