// How long the gateway spends parsing one engine's /metrics page. The page is what
// `strata engine-sim` serves after some traffic (vLLM's names, labels and buckets), padded
// with extra label sets to the size of a real vLLM page (~40-60 KB with every family).
#include <benchmark/benchmark.h>

#include "metrics/metrics.h"
#include "metrics/prometheus_text.h"

namespace {

std::string VllmSizedPage() {
  strata::metrics::Registry registry;
  std::vector<std::string> labels = {"model_name", "engine"};
  std::vector<double> buckets = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06,  0.08,
                                 0.1,   0.25,  0.5,  0.75, 1.0,  2.5,   5.0,
                                 7.5,   10.0,  20.0, 40.0, 80.0, 160.0, 640.0};
  for (const char* name : {"vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
                           "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds",
                           "vllm:request_prefill_time_seconds", "vllm:request_decode_time_seconds",
                           "vllm:request_prompt_tokens", "vllm:request_generation_tokens"}) {
    for (int engine = 0; engine < 2; ++engine) {
      auto& histogram = registry.AddHistogram(name, "Histogram.", labels, buckets)
                            .With({"meta-llama/Llama-3.1-8B-Instruct", std::to_string(engine)});
      for (int i = 0; i < 100; ++i) histogram.Observe(0.001 * i * i);
    }
  }
  for (const char* name :
       {"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"}) {
    registry.AddGauge(name, "Gauge.", labels)
        .With({"meta-llama/Llama-3.1-8B-Instruct", "0"})
        .Set(3);
  }
  for (const char* name :
       {"vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total",
        "vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:num_preemptions_total"}) {
    registry.AddCounter(name, "Counter.", labels)
        .With({"meta-llama/Llama-3.1-8B-Instruct", "0"})
        .Increment(123456789);
  }
  return registry.RenderText();
}

void BM_ParseVllmMetricsPage(benchmark::State& state) {
  std::string page = VllmSizedPage();
  size_t samples = 0;
  for (auto _ : state) {
    auto parsed = strata::metrics::ParsePrometheusText(page);
    samples = parsed->size();
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * page.size()));
  state.counters["page_bytes"] = static_cast<double>(page.size());
  state.counters["samples"] = static_cast<double>(samples);
}
BENCHMARK(BM_ParseVllmMetricsPage);

void BM_RenderRegistry(benchmark::State& state) {
  strata::metrics::Registry registry;
  auto& family = registry.AddHistogram("h_seconds", "H.", {"model_name", "engine"},
                                       strata::metrics::ExponentialBuckets(0.001, 2, 20));
  for (int i = 0; i < 16; ++i) family.With({"m", std::to_string(i)}).Observe(0.1);
  for (auto _ : state) benchmark::DoNotOptimize(registry.RenderText());
}
BENCHMARK(BM_RenderRegistry);

void BM_CounterIncrement(benchmark::State& state) {
  strata::metrics::Registry registry;
  strata::metrics::Counter& counter = registry.AddCounter("c_total", "C.").With();
  for (auto _ : state) counter.Increment();
}
BENCHMARK(BM_CounterIncrement)->Threads(1)->Threads(2);

}  // namespace
