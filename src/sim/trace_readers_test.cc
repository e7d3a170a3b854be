#include "sim/trace_readers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "sim/trace_shared_prefix.h"

namespace strata::sim {
namespace {

using ::testing::HasSubstr;

// Writes `text` to a fresh temporary file and returns its path.
std::string WriteTemp(const std::string& text, const std::string& suffix) {
  std::string path = ::testing::TempDir() + "trace_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + suffix;
  std::ofstream(path) << text;
  return path;
}

TEST(MooncakeTraceTest, ReadsRequestsAndSharedPrefixes) {
  std::string path = WriteTemp(
      "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 5, \"hash_ids\": [0, 1]}\n"
      "{\"timestamp\": 250, \"input_length\": 600, \"output_length\": 7, \"hash_ids\": [0, 2]}\n",
      ".jsonl");
  Result<std::vector<TraceRequest>> trace = ReadMooncakeTrace(path);
  ASSERT_TRUE(trace.has_value()) << trace.error().ToString();
  ASSERT_EQ(trace->size(), 2u);
  EXPECT_EQ((*trace)[1].arrival, std::chrono::milliseconds(250));
  EXPECT_EQ((*trace)[1].output_tokens, 7);
  std::vector<engine::TokenId> a = ExpandPrompt((*trace)[0]);
  std::vector<engine::TokenId> b = ExpandPrompt((*trace)[1]);
  ASSERT_EQ(a.size(), 1000u);
  ASSERT_EQ(b.size(), 600u);
  // Block 0 (512 tokens) is shared, block 1 is not.
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + 512, b.begin()));
  EXPECT_NE(a[512], b[512]);
  EXPECT_EQ(ChainedKeyHashes((*trace)[0])[0], ChainedKeyHashes((*trace)[1])[0]);
  EXPECT_DOUBLE_EQ(IdealPrefixReuse(*trace), 0.25);  // 1 of 4 blocks seen before
}

TEST(MooncakeTraceTest, ErrorsNameFileAndLine) {
  std::string path = WriteTemp(
      "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [0]}\n"
      "{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 0, \"hash_ids\": [0]}\n",
      ".jsonl");
  Result<std::vector<TraceRequest>> trace = ReadMooncakeTrace(path);
  ASSERT_FALSE(trace.has_value());
  EXPECT_THAT(trace.error().message(), HasSubstr(path + ":2: output_length"));
  std::string garbled = WriteTemp("{\"timestamp\": \n", ".jsonl");
  EXPECT_THAT(ReadMooncakeTrace(garbled).error().message(), HasSubstr(":1: not a JSON object"));
  EXPECT_EQ(ReadMooncakeTrace("/nonexistent/trace.jsonl").error().code(), StatusCode::kNotFound);
}

TEST(AzureTraceTest, ReadsRelativeArrivals) {
  std::string path = WriteTemp(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2023-11-16 18:15:46.6805900,374,44\n"
      "2023-11-16 18:15:50.9951690,396,109\n",
      ".csv");
  Result<std::vector<TraceRequest>> trace = ReadAzureTrace(path);
  ASSERT_TRUE(trace.has_value()) << trace.error().ToString();
  ASSERT_EQ(trace->size(), 2u);
  EXPECT_EQ((*trace)[0].arrival, Duration{0});
  EXPECT_EQ((*trace)[1].arrival, Duration{4'314'579'000});
  EXPECT_EQ((*trace)[1].input_tokens, 396);
  EXPECT_EQ(ExpandPrompt((*trace)[0]).size(), 374u);
  EXPECT_DOUBLE_EQ(IdealPrefixReuse(*trace), 0);
}

TEST(AzureTraceTest, ErrorsNameFileAndLine) {
  std::string path = WriteTemp(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n"
      "yesterday,1,1\n",
      ".csv");
  EXPECT_THAT(ReadAzureTrace(path).error().message(), HasSubstr(path + ":3: TIMESTAMP"));
  std::string short_row = WriteTemp("2023-11-16 18:15:46.68,374\n", ".csv");
  EXPECT_THAT(ReadAzureTrace(short_row).error().message(),
              HasSubstr(":1: expected TIMESTAMP,ContextTokens,GeneratedTokens"));
  std::string bad_tokens = WriteTemp("2023-11-16 18:15:46.68,x,3\n", ".csv");
  EXPECT_THAT(ReadAzureTrace(bad_tokens).error().message(), HasSubstr(":1: ContextTokens"));
}

TEST(SharedPrefixWorkloadTest, ReadsValuesAndGeneratesGroupsSharingSystemPrompts) {
  std::string path = WriteTemp(R"(config:
  load:
    type: poisson
    stages:
      - rate: 10
        duration: 20
  data:
    type: shared_prefix
    shared_prefix:
      num_groups: 3
      num_prompts_per_group: 2
      system_prompt_len: 64
      question_len: 32
      output_len: 8
)",
                               ".yaml");
  Result<SharedPrefixWorkload> workload = ReadSharedPrefixWorkload(path);
  ASSERT_TRUE(workload.has_value()) << workload.error().ToString();
  EXPECT_EQ(workload->num_groups, 3);
  std::vector<TraceRequest> trace = GenerateSharedPrefixTrace(*workload, 1.0, 7);
  EXPECT_GT(trace.size(), 100u);  // ~200 expected at 10/s for 20 s
  EXPECT_LT(trace.size(), 300u);
  EXPECT_EQ(trace.front().input_tokens, 96);
  EXPECT_EQ(trace.front().output_tokens, 8);
  // 6 distinct prompts, 6 blocks each: the system prompt's 4 blocks are shared within a group.
  EXPECT_GT(IdealPrefixReuse(trace), 0.9);
  EXPECT_EQ(GenerateSharedPrefixTrace(*workload, 1.0, 7).size(), trace.size());
  EXPECT_GT(GenerateSharedPrefixTrace(*workload, 2.0, 7).size(), trace.size());
}

TEST(SharedPrefixWorkloadTest, ErrorsNameTheField) {
  std::string path = WriteTemp(
      "config:\n  load:\n    stages: [{rate: 1, duration: 1}]\n  data:\n    shared_prefix:\n"
      "      num_groups: 0\n",
      ".yaml");
  EXPECT_THAT(ReadSharedPrefixWorkload(path).error().message(),
              HasSubstr("config.data.shared_prefix.num_groups: must be an integer >= 1"));
}

}  // namespace
}  // namespace strata::sim
