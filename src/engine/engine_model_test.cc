#include "engine/engine_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace strata::engine {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

EngineOptions SmallOptions() {
  EngineOptions options;
  options.profile = *ProfileByName("8b-h100");
  options.block_size = 4;
  options.num_kv_blocks = 64;
  options.max_num_seqs = 8;
  return options;
}

std::vector<TokenId> Prompt(int length, TokenId first = 1) {
  std::vector<TokenId> prompt;
  for (int i = 0; i < length; ++i) prompt.push_back(first + static_cast<TokenId>(i));
  return prompt;
}

EngineRequest Request(uint64_t id, std::vector<TokenId> prompt, int max_tokens) {
  EngineRequest request;
  request.id = id;
  request.prompt = std::move(prompt);
  request.max_tokens = max_tokens;
  return request;
}

// Steps until idle, in virtual time; returns every output with the time it appeared.
struct StepRun {
  std::vector<std::pair<TimePoint, TokenOutput>> outputs;
  TimePoint end;
};
StepRun RunToIdle(EngineModel& engine, TimePoint start) {
  StepRun run;
  TimePoint now = start;
  while (engine.HasWork()) {
    StepResult step = engine.Step(now);
    now += step.duration;
    for (const TokenOutput& output : step.outputs) run.outputs.emplace_back(now, output);
  }
  run.end = now;
  return run;
}

TEST(EngineModelTest, SingleRequestFollowsTheProfile) {
  EngineModel engine(SmallOptions());
  TimePoint start = FakeClock::kDefaultStart;
  ASSERT_TRUE(engine.Add(Request(1, Prompt(100), 3), start).ok());
  StepResult prefill = engine.Step(start);
  ASSERT_EQ(prefill.outputs.size(), 1u);
  EXPECT_EQ(prefill.duration, milliseconds(30) + microseconds(250) * 100);
  EXPECT_EQ(prefill.outputs[0].latency, prefill.duration);  // TTFT
  EXPECT_EQ(prefill.outputs[0].index, 0);
  StepResult decode = engine.Step(start + prefill.duration);
  EXPECT_EQ(decode.duration, milliseconds(12) + std::chrono::nanoseconds(40) * 101);
  EXPECT_EQ(decode.outputs[0].latency, decode.duration);  // inter-token latency
  StepResult last = engine.Step(start + prefill.duration + decode.duration);
  ASSERT_TRUE(last.outputs[0].finished);
  EXPECT_EQ(last.outputs[0].e2e, prefill.duration + decode.duration + last.duration);
  EXPECT_EQ(last.outputs[0].prompt_tokens, 100);
  EXPECT_FALSE(engine.HasWork());
  EngineStats stats = engine.Stats();
  EXPECT_EQ(stats.prompt_tokens, 100);
  EXPECT_EQ(stats.generation_tokens, 3);
  EXPECT_EQ(stats.kv_usage, 0);
}

TEST(EngineModelTest, SharedPrefixIsServedFromTheCache) {
  EngineModel engine(SmallOptions());
  TimePoint now = FakeClock::kDefaultStart;
  ASSERT_TRUE(engine.Add(Request(1, Prompt(40), 2), now).ok());
  now = RunToIdle(engine, now).end;
  std::vector<TokenId> second = Prompt(32);
  second.push_back(999);  // 32 shared tokens (8 blocks), then a different one
  ASSERT_TRUE(engine.Add(Request(2, second, 2), now).ok());
  StepResult step = engine.Step(now);
  EXPECT_EQ(step.duration, milliseconds(30) + microseconds(250) * 1);  // only 1 uncached token
  EngineStats stats = engine.Stats();
  EXPECT_EQ(stats.prefix_cache_queries, 40 + 33);
  EXPECT_EQ(stats.prefix_cache_hits, 32);
}

TEST(EngineModelTest, PrefixEvictedToHostMemoryIsReloadedNotRecomputed) {
  EngineOptions options = SmallOptions();
  options.num_kv_blocks = 40;  // 160 tokens: one 100-token prompt at a time
  options.cpu_offload_blocks = 100;
  EngineModel engine(options);
  TimePoint now = FakeClock::kDefaultStart;
  ASSERT_TRUE(engine.Add(Request(1, Prompt(100, 1), 1), now).ok());
  now = RunToIdle(engine, now).end;
  // Another prompt takes every GPU block: the first prompt's blocks go to host memory.
  ASSERT_TRUE(engine.Add(Request(2, Prompt(159, 5000), 1), now).ok());
  now = RunToIdle(engine, now).end;
  ASSERT_TRUE(engine.Add(Request(3, Prompt(100, 1), 1), now).ok());
  StepResult step = engine.Step(now);
  ASSERT_EQ(step.outputs.size(), 1u);
  // 96 tokens reloaded (the last block is computed): 96 x 3 us + 30 ms + 4 x 250 us.
  EXPECT_EQ(step.duration, microseconds(96 * 3) + milliseconds(30) + microseconds(4 * 250));
  EngineStats stats = engine.Stats();
  EXPECT_EQ(stats.host_cache_hits, 96);
  EXPECT_EQ(stats.prefix_cache_hits, 0);
  EXPECT_EQ(stats.prefix_cache_queries, 359);
}

TEST(EngineModelTest, FullyCachedPromptStillComputesItsLastToken) {
  EngineModel engine(SmallOptions());
  TimePoint now = FakeClock::kDefaultStart;
  ASSERT_TRUE(engine.Add(Request(1, Prompt(16), 1), now).ok());
  now = RunToIdle(engine, now).end;
  ASSERT_TRUE(engine.Add(Request(2, Prompt(16), 1), now).ok());
  StepResult step = engine.Step(now);
  EXPECT_EQ(step.duration, milliseconds(30) + microseconds(250) * 4);  // the last block
  EXPECT_EQ(engine.Stats().prefix_cache_hits, 12);
}

TEST(EngineModelTest, MaxNumSeqsBoundsTheBatch) {
  EngineOptions options = SmallOptions();
  options.max_num_seqs = 2;
  EngineModel engine(options);
  TimePoint now = FakeClock::kDefaultStart;
  for (uint64_t id = 1; id <= 3; ++id) ASSERT_TRUE(engine.Add(Request(id, Prompt(8), 4), now).ok());
  engine.Step(now);
  EXPECT_EQ(engine.Stats().running, 2);
  EXPECT_EQ(engine.Stats().waiting, 1);
  StepRun run = RunToIdle(engine, now);
  EXPECT_EQ(run.outputs.size(), 3u * 4 - 2);
}

TEST(EngineModelTest, ARequestArrivingAfterTheStepStartsJoinsTheNextStep) {
  EngineModel engine(SmallOptions());
  const TimePoint start = FakeClock::kDefaultStart;
  ASSERT_TRUE(engine.Add(Request(1, Prompt(8), 3), start).ok());
  // Real time ran ahead of the model's timeline: this one arrived after the step's start.
  ASSERT_TRUE(engine.Add(Request(2, Prompt(8, 100), 3), start + milliseconds(5)).ok());
  StepResult first = engine.Step(start);
  ASSERT_EQ(first.outputs.size(), 1u);
  EXPECT_EQ(first.outputs[0].request_id, 1u);
  EXPECT_EQ(engine.Stats().waiting, 1);
  StepResult second = engine.Step(start + first.duration);
  ASSERT_EQ(second.outputs.size(), 2u);
  EXPECT_EQ(second.outputs[0].request_id, 2u);
  EXPECT_EQ(second.outputs[0].latency, start + first.duration + second.duration -
                                           (start + milliseconds(5)));  // TTFT from its arrival

  // With only a later arrival waiting, a step does nothing and lets time pass.
  EngineModel idle(SmallOptions());
  ASSERT_TRUE(idle.Add(Request(3, Prompt(8), 1), start + milliseconds(5)).ok());
  StepResult nothing = idle.Step(start);
  EXPECT_EQ(nothing.duration, Duration{0});
  EXPECT_TRUE(nothing.outputs.empty());
  EXPECT_TRUE(idle.HasWork());
  EXPECT_EQ(idle.Step(start + milliseconds(5)).outputs.size(), 1u);
}

TEST(EngineModelTest, LongPromptIsPrefilledInChunks) {
  EngineOptions options = SmallOptions();
  options.profile.max_prefill_tokens_per_step = 32;
  EngineModel engine(options);
  TimePoint now = FakeClock::kDefaultStart;
  ASSERT_TRUE(engine.Add(Request(1, Prompt(80), 1), now).ok());
  EXPECT_TRUE(engine.Step(now).outputs.empty());  // 32
  EXPECT_TRUE(engine.Step(now).outputs.empty());  // 64
  StepResult last = engine.Step(now);             // 80: the first token
  ASSERT_EQ(last.outputs.size(), 1u);
  EXPECT_EQ(last.duration, milliseconds(30) + microseconds(250) * 16);
}

TEST(EngineModelTest, RunningOutOfBlocksPreemptsTheNewestAndEveryoneFinishes) {
  EngineOptions options = SmallOptions();
  options.num_kv_blocks = 6;  // 24 tokens
  EngineModel engine(options);
  TimePoint now = FakeClock::kDefaultStart;
  ASSERT_TRUE(engine.Add(Request(1, Prompt(4, 100), 12), now).ok());
  ASSERT_TRUE(engine.Add(Request(2, Prompt(4, 200), 12), now).ok());
  StepRun run = RunToIdle(engine, now);
  EXPECT_GT(engine.Stats().preemptions, 0);
  std::map<uint64_t, int> tokens;
  std::map<uint64_t, bool> finished;
  for (const auto& [at, output] : run.outputs) {
    EXPECT_EQ(output.index, tokens[output.request_id]);  // in order, none repeated
    ++tokens[output.request_id];
    if (output.finished) finished[output.request_id] = true;
  }
  EXPECT_EQ(tokens[1], 12);
  EXPECT_EQ(tokens[2], 12);
  EXPECT_TRUE(finished[1] && finished[2]);
  EXPECT_EQ(engine.Stats().kv_usage, 0);
}

TEST(EngineModelTest, AbortFreesTheRequest) {
  EngineModel engine(SmallOptions());
  TimePoint now = FakeClock::kDefaultStart;
  ASSERT_TRUE(engine.Add(Request(1, Prompt(20), 100), now).ok());
  engine.Step(now);
  EXPECT_GT(engine.Stats().kv_usage, 0);
  EXPECT_TRUE(engine.Abort(1));
  EXPECT_FALSE(engine.Abort(1));
  EXPECT_FALSE(engine.HasWork());
  EXPECT_EQ(engine.Stats().kv_usage, 0);
}

TEST(EngineModelTest, RejectsBadRequestsWithoutQueueingThem) {
  EngineOptions options = SmallOptions();
  options.lora_adapters = {"sql"};
  EngineModel engine(options);
  TimePoint now = FakeClock::kDefaultStart;
  EXPECT_THAT(engine.Add(Request(1, {}, 4), now).message(), HasSubstr("prompt"));
  EXPECT_THAT(engine.Add(Request(1, Prompt(4), 0), now).message(), HasSubstr("max_tokens"));
  EXPECT_THAT(engine.Add(Request(1, Prompt(250), 10), now).message(),
              HasSubstr("exceeds the KV cache (256 tokens)"));
  EngineRequest lora = Request(1, Prompt(4), 2);
  lora.adapter = "poetry";
  EXPECT_EQ(engine.Add(lora, now).code(), StatusCode::kNotFound);
  EXPECT_FALSE(engine.HasWork());
  lora.adapter = "sql";
  ASSERT_TRUE(engine.Add(lora, now).ok());
  EXPECT_EQ(engine.Add(lora, now).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(engine.Stats().waiting_adapters, std::vector<std::string>{"sql"});
  engine.Step(now);
  EXPECT_EQ(engine.Stats().running_adapters, std::vector<std::string>{"sql"});
}

TEST(EngineModelTest, SameInputsGiveTheSameRun) {
  auto run_once = [] {
    EngineModel engine(SmallOptions());
    TimePoint now = FakeClock::kDefaultStart;
    for (uint64_t id = 1; id <= 5; ++id) {
      EXPECT_TRUE(engine.Add(Request(id, Prompt(10 + 3 * static_cast<int>(id)), 6), now).ok());
    }
    std::vector<std::pair<uint64_t, TokenId>> tokens;
    for (const auto& [at, output] : RunToIdle(engine, now).outputs) {
      tokens.emplace_back(output.request_id, output.token);
    }
    return tokens;
  };
  EXPECT_EQ(run_once(), run_once());
}

TEST(EngineModelTest, ValidateNamesTheOption) {
  EngineOptions options = SmallOptions();
  options.max_num_seqs = 0;
  EXPECT_THAT(EngineModel::Validate(options).message(), HasSubstr("max_num_seqs"));
}

}  // namespace
}  // namespace strata::engine
