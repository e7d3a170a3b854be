#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::gateway {

// The engine signals the picker uses, read from a replica's Prometheus /metrics text.
struct EngineMetrics {
  int64_t waiting = 0;
  int64_t running = 0;
  double kv_usage = 0.0;  // fraction in [0, 1]
  std::vector<std::string> loaded_adapters;
  // Prompt tokens looked up in the prefix cache, and of those found there (counters since the
  // engine started; vLLM's vllm:prefix_cache_queries_total and _hits_total). Not refused when
  // malformed: the picker does not use them.
  double prefix_cache_queries = 0;
  double prefix_cache_hits = 0;
};

// Parses Prometheus text exposition from vLLM (`vllm:num_requests_waiting`,
// `vllm:num_requests_running`, `vllm:kv_cache_usage_perc`, older `vllm:gpu_cache_usage_perc`,
// `vllm:lora_requests_info{running_lora_adapters="a,b"}`) or SGLang (`sglang:num_queue_reqs`,
// `sglang:num_running_reqs`, `sglang:token_usage`). Values of several series (one per
// model_name) are summed; KV usage takes the largest; the adapters are those of the newest
// vllm:lora_requests_info series (the largest value, a time: vLLM keeps its stale ones). Unknown
// metrics are ignored. Returns kInvalidArgument naming the line of a malformed sample
// (metrics::ParsePrometheusText), or naming the series and value of a request count that is not a
// number in [0, 2^63) (NaN, +Inf, 1e300, a negative count, a sum that overflows) or a KV usage that
// is not finite: such a page is no reading at all, as a failed scrape is. Thread-safe.
Result<EngineMetrics> ParseEngineMetrics(std::string_view text);

}  // namespace strata::gateway
