#include "sim/trace_readers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>

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
  EXPECT_EQ(trace.error().message(),
            path + ":2: output_length: must be an integer from 1 to 2147483647");
  // Fields strata does not read are allowed (a published trace may carry more); missing ones
  // are named.
  std::string extra = WriteTemp(
      "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [0], "
      "\"session\": \"s1\"}\n"
      "{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 5}\n",
      ".jsonl");
  EXPECT_EQ(ReadMooncakeTrace(extra).error().message(), extra + ":2: hash_ids: required");
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

TEST(SharedPrefixWorkloadTest, ReadsLengthDistributionsAndMultiTurnChat) {
  // The shape of short-questions few-system-prompts multi-chat.
  std::string path = WriteTemp(R"(config:
  load:
    stages: [{rate: 20, duration: 10}]
  data:
    shared_prefix:
      num_groups: 2
      num_prompts_per_group: 50
      system_prompt_len: 64
      question_distribution: {mean: 30, std_dev: 9, min: 1, max: 10000}
      output_distribution: {mean: 100, std_dev: 30, min: 1, max: 10000}
      enable_multi_turn_chat: true
)",
                               ".yaml");
  Result<SharedPrefixWorkload> workload = ReadSharedPrefixWorkload(path);
  ASSERT_TRUE(workload.has_value()) << workload.error().ToString();
  EXPECT_EQ(workload->question_len.mean, 30);
  EXPECT_EQ(workload->question_len.std_dev, 9);
  EXPECT_EQ(workload->output_len.max, 10000);
  EXPECT_TRUE(workload->multi_turn_chat);
  std::vector<TraceRequest> trace = GenerateSharedPrefixTrace(*workload, 1.0, 3);
  ASSERT_GT(trace.size(), 150u);  // ~200 expected: 100 sessions, so some have a second round
  std::set<int> outputs;
  std::map<uint64_t, size_t> first_round_blocks;  // by the question's first key
  size_t second_rounds = 0;
  for (const TraceRequest& request : trace) {
    outputs.insert(request.output_tokens);
    EXPECT_EQ(request.input_tokens, static_cast<int>(request.block_keys.size()) * 16);
    const uint64_t question = request.block_keys[4];  // after the 4 system prompt blocks
    auto [it, first] = first_round_blocks.emplace(question, request.block_keys.size());
    if (!first) {
      // The next round repeats the first round's prompt, then its answer, then the question.
      ++second_rounds;
      EXPECT_GT(request.block_keys.size(), 2 * it->second - 4);
    }
  }
  EXPECT_GT(outputs.size(), 20u);  // drawn per prompt, not one fixed length
  EXPECT_GT(second_rounds, 0u);
  // Deterministic for a seed.
  std::vector<TraceRequest> again = GenerateSharedPrefixTrace(*workload, 1.0, 3);
  ASSERT_EQ(again.size(), trace.size());
  EXPECT_EQ(again.back().block_keys, trace.back().block_keys);
}

TEST(SharedPrefixWorkloadTest, FixedLengthsAndDistributionsMustAgree) {
  std::string base =
      "config:\n  load:\n    stages: [{rate: 1, duration: 1}]\n  data:\n    shared_prefix:\n"
      "      num_groups: 1\n      num_prompts_per_group: 1\n      system_prompt_len: 10\n"
      "      output_len: 5\n";
  EXPECT_TRUE(ReadSharedPrefixWorkload(
                  WriteTemp(base + "      question_len: 30\n"
                                   "      question_distribution: {mean: 30, std_dev: 3}\n",
                            ".yaml"))
                  .has_value());
  EXPECT_THAT(ReadSharedPrefixWorkload(WriteTemp(base + "      question_len: 31\n"
                                                        "      question_distribution: {mean: 30}\n",
                                                 ".yaml"))
                  .error()
                  .message(),
              HasSubstr("config.data.shared_prefix.question_len: disagrees with "
                        "question_distribution.mean"));
  EXPECT_THAT(ReadSharedPrefixWorkload(WriteTemp(base, ".yaml")).error().message(),
              HasSubstr("config.data.shared_prefix.question_len: must be an integer from 1 to "
                        "10000000 (or give question_distribution)"));
  EXPECT_THAT(ReadSharedPrefixWorkload(
                  WriteTemp(base + "      question_distribution: {mean: 30, stddev: 3}\n", ".yaml"))
                  .error()
                  .message(),
              HasSubstr("question_distribution.stddev: unknown field"));
  EXPECT_THAT(
      ReadSharedPrefixWorkload(
          WriteTemp(base + "      question_distribution: {mean: 30, min: 40, max: 50}\n", ".yaml"))
          .error()
          .message(),
      HasSubstr("question_distribution.mean: must lie within [min, max]"));
  EXPECT_THAT(ReadSharedPrefixWorkload(
                  WriteTemp(base + "      question_len: 30\n      enable_multi_turn_chat: yes "
                                   "please\n",
                            ".yaml"))
                  .error()
                  .message(),
              HasSubstr("enable_multi_turn_chat: must be true or false"));
}

TEST(SharedPrefixWorkloadTest, ErrorsNameTheField) {
  std::string path = WriteTemp(
      "config:\n  load:\n    stages: [{rate: 1, duration: 1}]\n  data:\n    shared_prefix:\n"
      "      num_groups: 0\n",
      ".yaml");
  EXPECT_THAT(
      ReadSharedPrefixWorkload(path).error().message(),
      HasSubstr("config.data.shared_prefix.num_groups: must be an integer from 1 to 10000000"));
}

}  // namespace
}  // namespace strata::sim
