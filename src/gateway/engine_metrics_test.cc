#include "gateway/engine_metrics.h"

#include <gtest/gtest.h>

namespace strata::gateway {
namespace {

TEST(EngineMetricsTest, ReadsVllmNames) {
  auto metrics = ParseEngineMetrics(R"(# HELP vllm:num_requests_waiting Waiting.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 3.0
vllm:num_requests_running{engine="0",model_name="m"} 2
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25
vllm:lora_requests_info{max_lora="2",running_lora_adapters="sql-lora,chat",waiting_lora_adapters=""} 1.7e9
vllm:prompt_tokens_total{model_name="m"} 1234
)");
  ASSERT_TRUE(metrics.has_value()) << metrics.error().ToString();
  EXPECT_EQ(metrics->waiting, 3);
  EXPECT_EQ(metrics->running, 2);
  EXPECT_DOUBLE_EQ(metrics->kv_usage, 0.25);
  EXPECT_EQ(metrics->loaded_adapters, (std::vector<std::string>{"sql-lora", "chat"}));
}

TEST(EngineMetricsTest, ReadsPrefixCacheCountersSummedOverEngines) {
  auto metrics =
      ParseEngineMetrics(R"(vllm:prefix_cache_queries_total{engine="0",model_name="m"} 400
vllm:prefix_cache_queries_total{engine="1",model_name="m"} 100
vllm:prefix_cache_hits_total{engine="0",model_name="m"} 320
vllm:prefix_cache_hits_total{engine="1",model_name="m"} NaN
)");
  ASSERT_TRUE(metrics.has_value()) << metrics.error().ToString();
  EXPECT_DOUBLE_EQ(metrics->prefix_cache_queries, 500);
  EXPECT_DOUBLE_EQ(metrics->prefix_cache_hits, 320);  // a NaN counter adds nothing
}

TEST(EngineMetricsTest, AdaptersAreThoseOfTheNewestLoraSeries) {
  // A vLLM (or llm-d-inference-sim) page after "chat" was evicted and "sql-lora" went idle: every
  // label set it ever used is still listed, each valued the time it was last set.
  auto metrics = ParseEngineMetrics(
      R"(vllm:lora_requests_info{max_lora="2",running_lora_adapters="sql-lora,chat",waiting_lora_adapters=""} 1.7e9
vllm:lora_requests_info{max_lora="2",running_lora_adapters="",waiting_lora_adapters=""} 1.700000020e9
vllm:lora_requests_info{max_lora="2",running_lora_adapters="sql-lora",waiting_lora_adapters=""} 1.700000010e9
)");
  ASSERT_TRUE(metrics.has_value()) << metrics.error().ToString();
  EXPECT_TRUE(metrics->loaded_adapters.empty());
  auto tie = ParseEngineMetrics(
      "vllm:lora_requests_info{running_lora_adapters=\"old\"} 5\n"
      "vllm:lora_requests_info{running_lora_adapters=\"a\"} 9\n"
      "vllm:lora_requests_info{running_lora_adapters=\"b\"} 9\n"
      "vllm:lora_requests_info{running_lora_adapters=\"nan\"} NaN\n");
  ASSERT_TRUE(tie.has_value()) << tie.error().ToString();
  EXPECT_EQ(tie->loaded_adapters, (std::vector<std::string>{"a", "b"}));
}

TEST(EngineMetricsTest, MapsOlderVllmAndSglangNames) {
  auto metrics = ParseEngineMetrics(
      "vllm:gpu_cache_usage_perc 0.5\nsglang:num_queue_reqs 4\nsglang:num_running_reqs 1 "
      "1700000000\nsglang:token_usage 0.75\n");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_EQ(metrics->waiting, 4);
  EXPECT_EQ(metrics->running, 1);
  EXPECT_DOUBLE_EQ(metrics->kv_usage, 0.75);
}

TEST(EngineMetricsTest, MalformedSamplesNameTheLine) {
  auto bad = ParseEngineMetrics("# ok\nvllm:num_requests_waiting{a=\"b\"} many\n");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(bad.error().message().starts_with("line 2 ")) << bad.error().message();
}

TEST(EngineMetricsTest, CountsOutOfRangeAreNoReading) {
  // Each of these was cast to an integer before: +Inf became INT64_MIN, an idle-looking replica.
  for (const std::string value : {"NaN", "+Inf", "-Inf", "1e300", "9223372036854775808", "-1"}) {
    auto bad = ParseEngineMetrics(
        "vllm:num_requests_running 2\nvllm:num_requests_waiting{model_name=\"m\"} " + value + "\n");
    ASSERT_FALSE(bad.has_value()) << value;
    EXPECT_EQ(bad.error().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(bad.error().message().starts_with("vllm:num_requests_waiting "))
        << bad.error().message();
  }
  auto running = ParseEngineMetrics("sglang:num_running_reqs Inf\n");
  ASSERT_FALSE(running.has_value());
  EXPECT_EQ(running.error().message(),
            "sglang:num_running_reqs +Inf: not a request count (a number in [0, 2^63))");
  // Series that fit one by one but not summed.
  auto sum = ParseEngineMetrics(
      "vllm:num_requests_waiting{model_name=\"a\"} "
      "9e18\nvllm:num_requests_waiting{model_name=\"b\"} "
      "9e18\n");
  ASSERT_FALSE(sum.has_value());
  EXPECT_NE(sum.error().message().find("passes 2^63"), std::string::npos) << sum.error().message();
  auto kv = ParseEngineMetrics("vllm:kv_cache_usage_perc NaN\n");
  ASSERT_FALSE(kv.has_value());
  EXPECT_TRUE(kv.error().message().starts_with("vllm:kv_cache_usage_perc NaN: "));
  // The largest count that fits is still a reading.
  auto big = ParseEngineMetrics("vllm:num_requests_waiting 9223372036854774784\n");
  ASSERT_TRUE(big.has_value()) << big.error().ToString();
  EXPECT_EQ(big->waiting, 9223372036854774784);
}

}  // namespace
}  // namespace strata::gateway
