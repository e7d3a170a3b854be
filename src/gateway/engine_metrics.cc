#include "gateway/engine_metrics.h"

#include <algorithm>

#include "metrics/prometheus_text.h"

namespace strata::gateway {
namespace {

enum class Signal { kNone, kWaiting, kRunning, kKvUsage, kLoraInfo };

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

}  // namespace

Result<EngineMetrics> ParseEngineMetrics(std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<metrics::Sample> samples, metrics::ParsePrometheusText(text));
  EngineMetrics metrics;
  for (const metrics::Sample& sample : samples) {
    switch (SignalFor(sample.name)) {
      case Signal::kWaiting:
        metrics.waiting += static_cast<int64_t>(sample.value);
        break;
      case Signal::kRunning:
        metrics.running += static_cast<int64_t>(sample.value);
        break;
      case Signal::kKvUsage:
        metrics.kv_usage = std::max(metrics.kv_usage, std::clamp(sample.value, 0.0, 1.0));
        break;
      case Signal::kLoraInfo:
        if (const std::string* running = sample.Label("running_lora_adapters")) {
          AppendAdapters(*running, &metrics.loaded_adapters);
        }
        break;
      case Signal::kNone:
        break;
    }
  }
  return metrics;
}

}  // namespace strata::gateway
