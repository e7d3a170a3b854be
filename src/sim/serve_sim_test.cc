#include "sim/serve_sim.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::sim {
namespace {

// Many short requests over a few shared system prompts: the case prefix-aware routing is for.
std::vector<TraceRequest> SharedPromptTrace() {
  std::vector<TraceRequest> trace;
  for (int i = 0; i < 400; ++i) {
    TraceRequest request;
    request.arrival = std::chrono::milliseconds(40 * i);
    request.block_tokens = 16;
    // Groups in a scrambled order, so that rotating over replicas does not line up with them.
    int group = static_cast<int>((static_cast<uint64_t>(i) * 2654435761u >> 7) % 8);
    for (int b = 0; b < 64; ++b) request.block_keys.push_back(1000 * group + b);  // 1024 shared
    request.block_keys.push_back(1'000'000 + i);                                  // 16 own
    request.input_tokens = 65 * 16;
    request.output_tokens = 20;
    trace.push_back(std::move(request));
  }
  return trace;
}

ServeSimOptions Options(std::string policy) {
  ServeSimOptions options;
  options.replicas = 4;
  options.engine.profile = *engine::ProfileByName("8b-h100");
  options.engine.num_kv_blocks = 200;  // 3200 tokens: room for 2 of the 8 system prompts
  options.policy = policy;
  return options;
}

TEST(ServeSimTest, EveryRequestCompletesWithSaneFigures) {
  Result<ServeSimReport> report = RunServeSim(SharedPromptTrace(), Options("round-robin"));
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->requests, 400u);
  EXPECT_EQ(report->completed, 400u);
  EXPECT_EQ(report->rejected, 0u);
  EXPECT_GT(report->ttft_p50, 0);
  EXPECT_LE(report->ttft_p50, report->ttft_p90);
  EXPECT_LE(report->ttft_p90, report->ttft_p99);
  EXPECT_GE(report->tpot_p50, 0.012);  // at least the batch-1 decode step
  EXPECT_GT(report->utilization, 0);
  EXPECT_LE(report->utilization, 1.0);
  EXPECT_EQ(report->ToJson()["policy"], "round-robin");
}

TEST(ServeSimTest, PrefixAwareRoutingHitsTheCacheMoreThanRoundRobin) {
  // The Inference Extension's weights: prefix affinity without strata's load cap.
  Result<ServeSimReport> prefix_aware = RunServeSim(SharedPromptTrace(), Options("epp-default"));
  Result<ServeSimReport> round_robin = RunServeSim(SharedPromptTrace(), Options("round-robin"));
  ASSERT_TRUE(prefix_aware.has_value() && round_robin.has_value());
  EXPECT_GT(prefix_aware->prefix_hit_rate, round_robin->prefix_hit_rate);
  EXPECT_LT(prefix_aware->ttft_p90, round_robin->ttft_p90);
}

TEST(ServeSimTest, StrataRoutesByPrefixAndBeatsRoundRobin) {
  Result<ServeSimReport> strata = RunServeSim(SharedPromptTrace(), Options("strata"));
  Result<ServeSimReport> round_robin = RunServeSim(SharedPromptTrace(), Options("round-robin"));
  ASSERT_TRUE(strata.has_value() && round_robin.has_value());
  EXPECT_GT(strata->prefix_hit_rate, round_robin->prefix_hit_rate);
  EXPECT_LT(strata->ttft_p90, round_robin->ttft_p90);
  EXPECT_GE(strata->goodput_fraction, round_robin->goodput_fraction);
}

TEST(ServeSimTest, HostTierServesPrefixesTheGpuCacheHasNoRoomFor) {
  ServeSimOptions options = Options("round-robin");
  Result<ServeSimReport> gpu_only = RunServeSim(SharedPromptTrace(), options);
  options.engine.cpu_offload_blocks = 2000;  // room for all 8 system prompts on every replica
  Result<ServeSimReport> offload = RunServeSim(SharedPromptTrace(), options);
  ASSERT_TRUE(gpu_only.has_value() && offload.has_value());
  EXPECT_EQ(gpu_only->host_hit_rate, 0);
  EXPECT_GT(offload->host_hit_rate, 0);
  EXPECT_GT(offload->prefix_hit_rate, gpu_only->prefix_hit_rate);
  EXPECT_LT(offload->ttft_p90, gpu_only->ttft_p90);
}

TEST(ServeSimTest, SameInputGivesTheSameReport) {
  Result<ServeSimReport> a = RunServeSim(SharedPromptTrace(), Options("strata"));
  Result<ServeSimReport> b = RunServeSim(SharedPromptTrace(), Options("strata"));
  EXPECT_EQ(a->ToJson(), b->ToJson());
}

TEST(ServeSimTest, RejectsBadInput) {
  EXPECT_EQ(RunServeSim({}, Options("strata")).error().code(), StatusCode::kInvalidArgument);
  ServeSimOptions options = Options("strata");
  options.replicas = 0;
  EXPECT_THAT(RunServeSim(SharedPromptTrace(), options).error().message(),
              ::testing::HasSubstr("replicas"));
}

}  // namespace
}  // namespace strata::sim
