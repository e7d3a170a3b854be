#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "engine/engine_model.h"
#include "gateway/picker.h"
#include "sim/trace_readers.h"

namespace strata::sim {

struct ServeSimOptions {
  int replicas = 8;
  engine::EngineOptions engine;  // every replica's engine
  // The picker's preset (gateway::PickerPresetNames), or its scorers when `scorers` is given.
  std::string policy = "strata";
  std::vector<gateway::WeightedScorer> scorers;
  // How often the gateway's view of each engine's metrics is refreshed (its scrape period).
  Duration scrape_interval = std::chrono::milliseconds(100);
  // Goodput counts requests within both service-level objectives.
  Duration ttft_slo = std::chrono::seconds(2);
  Duration tpot_slo = std::chrono::milliseconds(50);
  uint64_t seed = 1;
};

// What one replay measured. Latencies in seconds.
struct ServeSimReport {
  std::string policy;
  int replicas = 0;
  size_t requests = 0;
  size_t completed = 0;
  size_t rejected = 0;      // prompt + output larger than an engine's whole KV cache
  double span_seconds = 0;  // first arrival to last completion
  double ttft_p50 = 0, ttft_p90 = 0, ttft_p99 = 0;
  double tpot_p50 = 0, tpot_p90 = 0;  // time per output token after the first
  double inter_token_mean = 0;        // every gap between two tokens of a request, averaged
  // Prompt tokens not computed again (cached on the GPU or reloaded from the host tier) / prompt
  // tokens looked up, all engines; and the part of it reloaded from the host tier.
  double prefix_hit_rate = 0;
  double host_hit_rate = 0;
  // Prompt blocks the picker expected the chosen replica to hold / prompt blocks routed: the
  // router's prediction of the hit rate (in the trace's blocks), to set against the engines'.
  double predicted_hit_rate = 0;
  double output_tokens_per_second = 0;
  double requests_per_second = 0;
  double goodput_requests_per_second = 0;  // completed within both SLOs, per second of span
  double goodput_fraction = 0;
  double utilization = 0;  // fraction of the span the engines spent in steps
  int64_t preemptions = 0;

  nlohmann::json ToJson() const;
};

// Replays `trace` against `replicas` engine models in virtual time, routing every request with
// the gateway's real Picker (endpoint states built from the engines' state as last scraped,
// plus the exact in-flight count the gateway keeps). Deterministic for a given input.
// InvalidArgument for options an engine rejects or an empty trace.
Result<ServeSimReport> RunServeSim(const std::vector<TraceRequest>& trace,
                                   const ServeSimOptions& options);

}  // namespace strata::sim
