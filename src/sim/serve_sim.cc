#include "sim/serve_sim.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>

#include "sim/sim_picker_options.h"
#include "sim/stepping_engine.h"

namespace strata::sim {
namespace {

struct RequestRecord {
  TimePoint arrival{};
  TimePoint first_token{};
  TimePoint finished{};
  int output_tokens = 0;
  bool done = false;
  uint64_t ticket = 0;  // the picker's name for this request's prefill
};

// Nearest-rank percentile of sorted `values` (0 when empty).
double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

nlohmann::json ServeSimReport::ToJson() const {
  return {{"policy", policy},
          {"replicas", replicas},
          {"requests", requests},
          {"completed", completed},
          {"rejected", rejected},
          {"span_seconds", span_seconds},
          {"ttft_seconds", {{"p50", ttft_p50}, {"p90", ttft_p90}, {"p99", ttft_p99}}},
          {"tpot_seconds", {{"p50", tpot_p50}, {"p90", tpot_p90}}},
          {"inter_token_seconds", {{"mean", inter_token_mean}}},
          {"prefix_hit_rate", prefix_hit_rate},
          {"host_hit_rate", host_hit_rate},
          {"predicted_hit_rate", predicted_hit_rate},
          {"output_tokens_per_second", output_tokens_per_second},
          {"requests_per_second", requests_per_second},
          {"goodput_requests_per_second", goodput_requests_per_second},
          {"goodput_fraction", goodput_fraction},
          {"utilization", utilization},
          {"preemptions", preemptions}};
}

Result<ServeSimReport> RunServeSim(const std::vector<TraceRequest>& trace,
                                   const ServeSimOptions& options) {
  if (trace.empty()) return Err(InvalidArgumentError("trace: has no requests"));
  if (options.replicas < 1) return Err(InvalidArgumentError("replicas: must be at least 1"));
  Status valid = engine::EngineModel::Validate(options.engine);
  if (!valid.ok()) return Err(valid);

  std::deque<SteppingEngine> replicas;  // engines do not move: a deque never relocates them
  for (int i = 0; i < options.replicas; ++i) replicas.emplace_back(options.engine);
  std::vector<gateway::EndpointState> endpoints(options.replicas);
  for (int i = 0; i < options.replicas; ++i) endpoints[i].id = "replica-" + std::to_string(i);

  gateway::PickerOptions picker_options =
      SimPickerOptions(replicas[0].model, trace.front().block_tokens);
  picker_options.policy = options.policy;
  picker_options.scorers = options.scorers;
  if (Result<gateway::PickerProfile> profile = gateway::ResolvePickerProfile(picker_options);
      !profile) {
    return Err(profile.error());
  }
  picker_options.seed = options.seed;
  picker_options.metrics_stale_after = gateway::MetricsLifetime(options.scrape_interval);
  gateway::Picker picker(picker_options);

  std::vector<size_t> order(trace.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return trace[a].arrival < trace[b].arrival; });
  const TimePoint start = FakeClock::kDefaultStart;
  std::vector<RequestRecord> records(trace.size());
  ServeSimReport report;
  report.policy = options.policy;
  report.replicas = options.replicas;
  report.requests = trace.size();
  TimePoint last_scrape = TimePoint::min();

  size_t predicted_blocks = 0;
  size_t routed_blocks = 0;
  size_t next = 0;
  while (true) {
    TimePoint next_arrival =
        next < order.size() ? start + trace[order[next]].arrival : TimePoint::max();
    const size_t stepping = FirstStepToEnd(
        replicas.size(), [&](size_t i) -> const SteppingEngine& { return replicas[i]; });
    if (stepping == replicas.size() && next_arrival == TimePoint::max()) break;
    if (stepping != replicas.size() && replicas[stepping].step_end <= next_arrival) {
      SteppingEngine& replica = replicas[stepping];
      TimePoint now = replica.step_end;
      replica.busy = false;
      for (const engine::TokenOutput& output : replica.pending.outputs) {
        RequestRecord& record = records[output.request_id];
        if (output.index == 0) {
          record.first_token = now;
          picker.PrefillDone(endpoints[stepping].id, record.ticket, now);
        }
        ++record.output_tokens;
        if (output.finished) {
          record.finished = now;
          record.done = true;
          --endpoints[stepping].in_flight;
        }
      }
      if (replica.model.HasWork()) replica.StartStep(now);
      continue;
    }
    // An arrival: refresh the scraped view if it is due, then route.
    TimePoint now = next_arrival;
    size_t index = order[next++];
    records[index].arrival = now;
    if (last_scrape == TimePoint::min() || now - last_scrape >= options.scrape_interval) {
      last_scrape = now;
      for (size_t i = 0; i < replicas.size(); ++i) replicas[i].Scrape(endpoints[i], now);
    }
    const TraceRequest& request = trace[index];
    std::vector<uint64_t> hashes = ChainedKeyHashes(request);
    gateway::PickRequest pick;
    pick.block_hashes = hashes;
    Result<gateway::PickResult> picked = picker.Pick(endpoints, pick, now);
    if (!picked) return Err(picked.error());
    size_t chosen = picked->index;
    predicted_blocks += picked->matched_blocks;
    routed_blocks += picked->total_blocks;
    engine::EngineRequest engine_request;
    engine_request.id = index;
    engine_request.prompt = ExpandPrompt(request);
    engine_request.max_tokens = request.output_tokens;
    if (!replicas[chosen].model.Add(std::move(engine_request), now).ok()) {
      picker.PrefillDone(endpoints[chosen].id, picked->ticket, now);
      ++report.rejected;
      continue;
    }
    ++endpoints[chosen].in_flight;
    records[index].ticket = picked->ticket;
    if (!replicas[chosen].busy) replicas[chosen].StartStep(now);
  }

  std::vector<double> ttft;
  std::vector<double> tpot;
  TimePoint end = start;
  size_t good = 0;
  int64_t output_tokens = 0;
  Duration decode_time{0};
  int64_t token_gaps = 0;
  for (const RequestRecord& record : records) {
    if (!record.done) continue;
    ++report.completed;
    end = std::max(end, record.finished);
    output_tokens += record.output_tokens;
    Duration first = record.first_token - record.arrival;
    ttft.push_back(ToSeconds(first));
    Duration per_token = record.output_tokens > 1
                             ? (record.finished - record.first_token) / (record.output_tokens - 1)
                             : Duration{0};
    if (record.output_tokens > 1) {
      tpot.push_back(ToSeconds(per_token));
      decode_time += record.finished - record.first_token;
      token_gaps += record.output_tokens - 1;
    }
    if (first <= options.ttft_slo && per_token <= options.tpot_slo) ++good;
  }
  std::sort(ttft.begin(), ttft.end());
  std::sort(tpot.begin(), tpot.end());
  TimePoint first_arrival = start + trace[order.front()].arrival;
  report.span_seconds = ToSeconds(end - first_arrival);
  double span = std::max(report.span_seconds, 1e-9);
  report.ttft_p50 = Percentile(ttft, 0.5);
  report.ttft_p90 = Percentile(ttft, 0.9);
  report.ttft_p99 = Percentile(ttft, 0.99);
  report.tpot_p50 = Percentile(tpot, 0.5);
  report.tpot_p90 = Percentile(tpot, 0.9);
  report.inter_token_mean = token_gaps == 0 ? 0 : ToSeconds(decode_time) / token_gaps;
  int64_t queries = 0;
  int64_t hits = 0;
  int64_t host_hits = 0;
  Duration busy{0};
  for (const SteppingEngine& replica : replicas) {
    engine::EngineStats stats = replica.model.Stats();
    queries += stats.prefix_cache_queries;
    hits += stats.prefix_cache_hits + stats.host_cache_hits;
    host_hits += stats.host_cache_hits;
    report.preemptions += stats.preemptions;
    busy += replica.work_time;
  }
  report.prefix_hit_rate = queries == 0 ? 0 : static_cast<double>(hits) / queries;
  report.host_hit_rate = queries == 0 ? 0 : static_cast<double>(host_hits) / queries;
  report.predicted_hit_rate = routed_blocks == 0 ? 0
                                                 : static_cast<double>(predicted_blocks) /
                                                       static_cast<double>(routed_blocks);
  report.output_tokens_per_second = static_cast<double>(output_tokens) / span;
  report.requests_per_second = static_cast<double>(report.completed) / span;
  report.goodput_requests_per_second = static_cast<double>(good) / span;
  report.goodput_fraction =
      report.completed == 0 ? 0 : static_cast<double>(good) / static_cast<double>(report.requests);
  report.utilization = ToSeconds(busy) / (span * options.replicas);
  return report;
}

}  // namespace strata::sim
