#include "gateway/engine_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "metrics/prometheus_text.h"

namespace strata::gateway {
namespace {

enum class Signal { kNone, kWaiting, kRunning, kKvUsage, kLoraInfo, kPrefixQueries, kPrefixHits };

Signal SignalFor(std::string_view name) {
  if (name == "vllm:num_requests_waiting" || name == "sglang:num_queue_reqs") {
    return Signal::kWaiting;
  }
  if (name == "vllm:num_requests_running" || name == "sglang:num_running_reqs") {
    return Signal::kRunning;
  }
  if (name == "vllm:kv_cache_usage_perc" || name == "vllm:gpu_cache_usage_perc" ||
      name == "sglang:token_usage") {
    return Signal::kKvUsage;
  }
  if (name == "vllm:lora_requests_info") return Signal::kLoraInfo;
  if (name == "vllm:prefix_cache_queries_total") return Signal::kPrefixQueries;
  if (name == "vllm:prefix_cache_hits_total") return Signal::kPrefixHits;
  return Signal::kNone;
}

void AppendAdapters(const std::string& list, std::vector<std::string>* out) {
  size_t from = 0;
  while (from < list.size()) {
    size_t comma = list.find(',', from);
    if (comma == std::string::npos) comma = list.size();
    if (comma > from) out->push_back(list.substr(from, comma - from));
    from = comma + 1;
  }
}

// "vllm:num_requests_waiting +Inf": the series and the value it was refused for.
std::string Describe(const metrics::Sample& sample) {
  return fmt::format("{} {}", sample.name, metrics::FormatSampleValue(sample.value));
}

// Adds a request count to `total`. A count that is not finite, is negative or does not fit an
// int64 (NaN, +Inf, 1e300) is refused rather than cast: the cast is undefined, and on x86 +Inf
// became INT64_MIN, which made a saturated replica look idle.
Status AddCount(const metrics::Sample& sample, int64_t* total) {
  constexpr double kTwoTo63 = 9223372036854775808.0;
  // Written so that NaN fails too.
  if (!(sample.value >= 0 && sample.value < kTwoTo63)) {
    return InvalidArgumentError(
        fmt::format("{}: not a request count (a number in [0, 2^63))", Describe(sample)));
  }
  if (__builtin_add_overflow(*total, static_cast<int64_t>(sample.value), total)) {
    return InvalidArgumentError(
        fmt::format("{}: the sum over its series passes 2^63", Describe(sample)));
  }
  return Status::Ok();
}

}  // namespace

Result<EngineMetrics> ParseEngineMetrics(std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<metrics::Sample> samples, metrics::ParsePrometheusText(text));
  EngineMetrics metrics;
  // vLLM sets vllm:lora_requests_info{...} to the current time under the label set of the moment
  // and never removes a label set it used before (prometheus_client keeps every child; so does
  // llm-d-inference-sim's Go client): the page lists every adapter set the engine ever had. The
  // newest series, the largest value, is the one that holds; equally new ones all do.
  double newest_lora_info = -std::numeric_limits<double>::infinity();
  for (const metrics::Sample& sample : samples) {
    switch (SignalFor(sample.name)) {
      case Signal::kWaiting:
        RETURN_IF_ERROR(AddCount(sample, &metrics.waiting));
        break;
      case Signal::kRunning:
        RETURN_IF_ERROR(AddCount(sample, &metrics.running));
        break;
      case Signal::kKvUsage:
        if (!std::isfinite(sample.value)) {
          return Err(InvalidArgumentError(
              fmt::format("{}: not a cache usage (a finite fraction)", Describe(sample))));
        }
        metrics.kv_usage = std::max(metrics.kv_usage, std::clamp(sample.value, 0.0, 1.0));
        break;
      case Signal::kLoraInfo:
        // Written so that a NaN series is never the newest.
        if (!(sample.value >= newest_lora_info)) break;
        if (sample.value > newest_lora_info) metrics.loaded_adapters.clear();
        newest_lora_info = sample.value;
        if (const std::string* running = sample.Label("running_lora_adapters")) {
          AppendAdapters(*running, &metrics.loaded_adapters);
        }
        break;
      case Signal::kPrefixQueries:
        if (std::isfinite(sample.value) && sample.value >= 0) {
          metrics.prefix_cache_queries += sample.value;
        }
        break;
      case Signal::kPrefixHits:
        if (std::isfinite(sample.value) && sample.value >= 0)
          metrics.prefix_cache_hits += sample.value;
        break;
      case Signal::kNone:
        break;
    }
  }
  return metrics;
}

}  // namespace strata::gateway
