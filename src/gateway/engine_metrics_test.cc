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

}  // namespace
}  // namespace strata::gateway
