// The user-space parsing a proxied request costs the gateway, step by step, on the inputs of
// bench/gateway/overhead.sh: the client's head and body, the replica's head and body. And the
// metric updates of one request, from one or two event loops at once, on one shared child per
// series or on a part per loop (metrics::MetricFamily::WithPart).
#include <benchmark/benchmark.h>

#include <string>
#include <string_view>

#include "gateway/request.h"
#include "gateway/usage.h"
#include "metrics/metrics.h"
#include "net/http_request_parser.h"
#include "net/http_response_parser.h"

namespace strata::gateway {
namespace {

// What wrk sends in overhead.sh (post.lua).
constexpr std::string_view kRequestBody =
    R"({"model":"bench","messages":[{"role":"user","content":"Say hello in five words."}],)"
    R"("max_tokens":8})";
constexpr std::string_view kRequestHead =
    "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
    "Content-Type: application/json\r\nContent-Length: 99\r\n\r\n";

// What engine-sim answers to it.
constexpr std::string_view kResponseBody =
    R"({"choices":[{"finish_reason":"length","index":0,"logprobs":null,"message":{"content":)"
    R"(" with cluster latency latency we and second GPUs","role":"assistant"},)"
    R"("stop_reason":null}],"created":1796024425,"id":"chatcmpl-0000000000000001",)"
    R"("model":"bench","object":"chat.completion","usage":{"completion_tokens":8,)"
    R"("prompt_tokens":16,"prompt_tokens_details":null,"total_tokens":24}})";
constexpr std::string_view kResponseHead =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 372\r\n\r\n";

void BM_RequestHead(benchmark::State& state) {
  net::RequestHead head;
  for (auto _ : state) {
    auto result = net::ParseRequestHead(kRequestHead, 8192, 1 << 20, &head);
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_RequestHead);

void BM_RequestBody(benchmark::State& state) {
  for (auto _ : state) {
    Result<InferenceRequest> request =
        ParseInferenceRequest(kRequestBody, ApiKind::kChatCompletions);
    benchmark::DoNotOptimize(request);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kRequestBody.size()));
}
BENCHMARK(BM_RequestBody);

void BM_ResponseHead(benchmark::State& state) {
  net::ResponseHead head;
  for (auto _ : state) {
    auto result = net::ParseResponseHead(kResponseHead, 8192, &head);
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_ResponseHead);

void BM_ResponseUsage(benchmark::State& state) {
  for (auto _ : state) {
    TokenUsage usage = UsageFromBody(kResponseBody);
    benchmark::DoNotOptimize(usage);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kResponseBody.size()));
}
BENCHMARK(BM_ResponseUsage);

// A long prompt: one 64 KB message of plain text.
void BM_LongPromptBody(benchmark::State& state) {
  std::string body = R"({"model":"bench","messages":[{"role":"user","content":")";
  while (body.size() < 64 * 1024) body += "The quick brown fox jumps over the lazy dog. ";
  body += R"("}],"max_tokens":8})";
  for (auto _ : state) {
    Result<InferenceRequest> request = ParseInferenceRequest(body, ApiKind::kChatCompletions);
    benchmark::DoNotOptimize(request);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_LongPromptBody);

// One request's metric updates as a gateway loop makes them (a request count, a pick, two token
// counts, the TTFT and e2e histograms), by each benchmark thread standing for a loop. Arg 0: all
// threads update the same children; 1: each thread its own part of them.
void BM_RequestMetrics(benchmark::State& state) {
  static metrics::Registry registry;
  static metrics::CounterFamily& counters = registry.AddCounter("c_total", "C.", {"kind"});
  static metrics::HistogramFamily& histograms =
      registry.AddHistogram("h_seconds", "H.", {"kind"}, metrics::ExponentialBuckets(0.001, 2, 16));
  const size_t part = state.range(0) == 0 ? 0 : static_cast<size_t>(state.thread_index());
  metrics::Counter& requests = counters.WithPart({"requests"}, part);
  metrics::Counter& picks = counters.WithPart({"picks"}, part);
  metrics::Counter& prompt = counters.WithPart({"prompt"}, part);
  metrics::Counter& completion = counters.WithPart({"completion"}, part);
  metrics::Histogram& ttft = histograms.WithPart({"ttft"}, part);
  metrics::Histogram& e2e = histograms.WithPart({"e2e"}, part);
  for (auto _ : state) {
    requests.Increment();
    picks.Increment();
    prompt.Increment(17);
    completion.Increment(8);
    ttft.Observe(0.0021);
    e2e.Observe(0.0034);
  }
}
BENCHMARK(BM_RequestMetrics)->Arg(0)->Arg(1)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace
}  // namespace strata::gateway
