#include "gateway/picker.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <tuple>

namespace strata::gateway {
namespace {

constexpr std::pair<PickPolicy, std::string_view> kPolicyNames[] = {
    {PickPolicy::kStrata, "strata"},          {PickPolicy::kEppDefault, "epp-default"},
    {PickPolicy::kPrefixOnly, "prefix-only"}, {PickPolicy::kLeastRequest, "least-request"},
    {PickPolicy::kRoundRobin, "round-robin"}, {PickPolicy::kRandom, "random"},
};

bool UsesPrefix(PickPolicy policy) {
  return policy == PickPolicy::kStrata || policy == PickPolicy::kEppDefault ||
         policy == PickPolicy::kPrefixOnly;
}

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A value in [0, 1]: 1 for the lowest of the range, 0 for the highest (the EPP queue scorer's
// shape). Equal values all score 1.
double InverseRangeScore(double value, double lowest, double highest) {
  if (highest <= lowest) return 1.0;
  return 1.0 - (value - lowest) / (highest - lowest);
}

}  // namespace

std::string_view PickPolicyName(PickPolicy policy) {
  for (const auto& [p, name] : kPolicyNames) {
    if (p == policy) return name;
  }
  return "unknown";
}

Result<PickPolicy> ParsePickPolicy(std::string_view name) {
  for (const auto& [policy, policy_name] : kPolicyNames) {
    if (policy_name == name) return policy;
  }
  return Err(InvalidArgumentError(fmt::format(
      "unknown picker policy \"{}\" (expected strata, epp-default, prefix-only, least-request, "
      "round-robin or random)",
      name)));
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
    : options_(options),
      prefix_index_(options.prefix_block_bytes, options.prefix_blocks_per_endpoint),
      random_(options.seed) {}

Status Picker::Eligible(std::span<const EndpointState> endpoints, const PickRequest& request,
                        TimePoint now, std::span<const uint64_t> hashes,
                        std::vector<Candidate>* candidates) const {
  candidates->clear();
  int not_ready = 0, draining = 0, unhealthy = 0, excluded = 0, no_adapter = 0;
  // The EPP baseline knows only what it scrapes.
  const bool counts_in_flight = options_.policy != PickPolicy::kEppDefault;
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
    const bool fresh = endpoint.metrics_at != TimePoint{} &&
                       now - endpoint.metrics_at <= options_.metrics_stale_after;
    const bool loaded =
        fresh && !request.adapter.empty() && Contains(endpoint.loaded_adapters, request.adapter);
    if (!request.adapter.empty() && !loaded &&
        !Contains(endpoint.served_adapters, request.adapter)) {
      ++no_adapter;
      continue;
    }
    Candidate candidate;
    candidate.index = i;
    candidate.queue = (fresh ? endpoint.waiting + endpoint.running : 0) +
                      (counts_in_flight ? endpoint.in_flight : 0);
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
  }
  if (candidates->empty()) {
    return UnavailableError(fmt::format(
        "0/{} endpoints eligible: {} not ready, {} draining, {} unhealthy, {} already failed, "
        "{} without adapter \"{}\"",
        endpoints.size(), not_ready, draining, unhealthy, excluded, no_adapter, request.adapter));
  }
  return Status::Ok();
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

PickResult Picker::ChooseByScore(const std::vector<Candidate>& candidates) {
  const bool prefix_only = options_.policy == PickPolicy::kPrefixOnly;
  int64_t min_queue = std::numeric_limits<int64_t>::max();
  int64_t max_queue = std::numeric_limits<int64_t>::min();
  size_t best_match_anywhere = 0;
  for (const Candidate& c : candidates) {
    min_queue = std::min(min_queue, c.queue);
    max_queue = std::max(max_queue, c.queue);
    best_match_anywhere = std::max(best_match_anywhere, c.matched_blocks);
  }
  std::vector<double> scores(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (prefix_only) {
      scores[i] = static_cast<double>(c.matched_blocks);
      continue;
    }
    scores[i] = options_.queue_weight * InverseRangeScore(static_cast<double>(c.queue),
                                                          static_cast<double>(min_queue),
                                                          static_cast<double>(max_queue)) +
                options_.kv_weight * (1.0 - c.kv_usage);
    // Normalised by the longest match among candidates, as the EPP's prefix scorer does.
    if (best_match_anywhere > 0) {
      scores[i] += options_.prefix_weight * static_cast<double>(c.matched_blocks) /
                   static_cast<double>(best_match_anywhere);
    }
  }
  const double best = *std::max_element(scores.begin(), scores.end());
  std::vector<size_t> tied;
  for (size_t i = 0; i < candidates.size(); ++i) {
    // Scores are sums of a few doubles: compare with a tolerance so equal endpoints tie.
    if (best - scores[i] <= 1e-9) tied.push_back(i);
  }
  const Candidate& chosen = candidates[tied[BreakTie(tied.size())]];
  PickResult result;
  result.index = chosen.index;
  result.matched_blocks = chosen.matched_blocks;
  result.reason = Explain(candidates, chosen, std::vector<bool>(candidates.size(), false),
                          /*lora_requested=*/false);
  if (prefix_only && result.reason == PickReason::kLeastLoaded) {
    result.reason = PickReason::kRoundRobin;
  }
  return result;
}

PickResult Picker::ChooseByCost(const std::vector<Candidate>& candidates, size_t total_blocks,
                                bool lora_requested) {
  double mean_load = 0;
  for (const Candidate& c : candidates) mean_load += static_cast<double>(c.queued + c.running);
  mean_load /= static_cast<double>(candidates.size());
  const double allowed_excess = std::max(static_cast<double>(options_.load_cap_min_excess),
                                         options_.load_cap_ratio * mean_load);
  // One queued request ahead costs about what the picker has been sending on average.
  const double per_request = std::max(mean_prefill_blocks_, 1.0);

  std::vector<bool>& capped = capped_;
  std::vector<double>& costs = costs_;
  capped.assign(candidates.size(), false);
  costs.assign(candidates.size(), 0.0);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    capped[i] = static_cast<double>(c.queued + c.running) - mean_load > allowed_excess ||
                c.kv_usage >= options_.kv_saturation;
    const size_t cached = capped[i] ? 0 : c.matched_blocks;
    // Queued requests this picker did not send are priced at the mean prefill.
    const double unaccounted =
        static_cast<double>(std::max<int64_t>(c.queued - c.outstanding_requests, 0));
    double requests_ahead = unaccounted + options_.running_share * static_cast<double>(c.running) +
                            options_.kv_share * c.kv_usage;
    if (lora_requested && (capped[i] || !c.adapter_loaded)) requests_ahead += options_.lora_share;
    costs[i] = c.outstanding_blocks + per_request * requests_ahead +
               (1.0 + options_.miss_weight) * static_cast<double>(total_blocks - cached);
  }
  const double least = *std::min_element(costs.begin(), costs.end());
  std::vector<size_t>& tied = tied_;
  tied.clear();
  int64_t least_load = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (costs[i] - least > 1e-9 * std::max(1.0, least)) continue;
    // Equal estimates: the less loaded endpoint, so that ties spread the load.
    const int64_t load = candidates[i].queued + candidates[i].running;
    if (load < least_load) {
      least_load = load;
      tied.clear();
    }
    if (load == least_load) tied.push_back(i);
  }
  const Candidate& chosen = candidates[tied[BreakTie(tied.size())]];

  const double uncached = static_cast<double>(total_blocks - chosen.matched_blocks);
  if (total_blocks > 0) {
    // A slow running mean: it prices the queue, which holds requests routed over many picks.
    constexpr double kMeanWeight = 1.0 / 32;
    mean_prefill_blocks_ =
        mean_prefill_blocks_ == 0
            ? uncached
            : mean_prefill_blocks_ + kMeanWeight * (uncached - mean_prefill_blocks_);
  }
  PickResult result;
  result.index = chosen.index;
  result.matched_blocks = chosen.matched_blocks;
  result.reason = Explain(candidates, chosen, capped, lora_requested);
  return result;
}

std::vector<uint64_t> Picker::BlockHashes(std::string_view prompt) const {
  if (!UsesPrefix(options_.policy)) return {};
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
  if (!UsesPrefix(options_.policy)) hashes = {};
  if (options_.policy == PickPolicy::kStrata) TrimToInFlight(endpoints);
  std::vector<Candidate>& candidates = candidates_;
  RETURN_IF_ERROR(Eligible(endpoints, request, now, hashes, &candidates));

  PickResult result;
  switch (options_.policy) {
    case PickPolicy::kRoundRobin:
      result.index = candidates[BreakTie(candidates.size())].index;
      result.reason = PickReason::kRoundRobin;
      break;
    case PickPolicy::kRandom: {
      std::uniform_int_distribution<size_t> uniform(0, candidates.size() - 1);
      result.index = candidates[uniform(random_)].index;
      result.reason = PickReason::kRandom;
      break;
    }
    case PickPolicy::kLeastRequest: {
      int64_t least = std::numeric_limits<int64_t>::max();
      for (const Candidate& c : candidates) least = std::min(least, c.queue);
      std::vector<size_t> tied;
      for (const Candidate& c : candidates) {
        if (c.queue == least) tied.push_back(c.index);
      }
      result.index = tied[BreakTie(tied.size())];
      result.reason = PickReason::kLeastLoaded;
      break;
    }
    case PickPolicy::kStrata: {
      result = ChooseByCost(candidates, hashes.size(), !request.adapter.empty());
      const std::string& id = endpoints[result.index].id;
      prefix_index_.Record(id, hashes);
      result.ticket = next_ticket_++;
      work_[id].pending.push_back(
          {result.ticket, static_cast<double>(hashes.size() - result.matched_blocks), now});
      break;
    }
    case PickPolicy::kEppDefault:
    case PickPolicy::kPrefixOnly:
      result = ChooseByScore(candidates);
      prefix_index_.Record(endpoints[result.index].id, hashes);
      break;
  }
  result.total_blocks = hashes.size();
  return result;
}

}  // namespace strata::gateway
