#include "sim/trace_shared_prefix.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>

#include "common/field_decoder.h"
#include "common/yaml_json.h"

namespace strata::sim {
namespace {

constexpr int kBlockTokens = 16;
// Keys: groups' system prompts and questions, apart from Mooncake's ids and unique keys.
constexpr uint64_t kSystemKeyBase = 1ull << 60;
constexpr uint64_t kQuestionKeyBase = 1ull << 61;
constexpr uint64_t kAnswerKeyBase = 3ull << 60;
constexpr int64_t kMaxTokens = 10'000'000;

// A count of tokens, groups or prompts: an integer from 1 to kMaxTokens.
Result<int> Count(const FieldDecoder& object, std::string_view name) {
  ASSIGN_OR_RETURN(int64_t count, object.RequiredInteger(name, 1, kMaxTokens));
  return static_cast<int>(count);
}

// Reads `<name>_len` and/or `<name>_distribution` of the shared_prefix object.
Result<LengthDistribution> ReadLength(const FieldDecoder& shared, const std::string& name) {
  const std::string fixed_name = name + "_len";
  const std::string distribution_name = name + "_distribution";
  std::optional<int> fixed;
  if (shared.Has(fixed_name)) {
    ASSIGN_OR_RETURN(fixed, Count(shared, fixed_name));
  }
  if (!shared.Has(distribution_name)) {
    if (!fixed) {
      return Err(
          shared.Error(fixed_name, fmt::format("must be an integer from 1 to {} (or give {})",
                                               kMaxTokens, distribution_name)));
    }
    return LengthDistribution{static_cast<double>(*fixed), 0, *fixed, *fixed};
  }
  ASSIGN_OR_RETURN(FieldDecoder distribution,
                   shared.Object(distribution_name, {"mean", "std_dev", "min", "max"}));
  LengthDistribution length{0, 0, 1, static_cast<int>(kMaxTokens)};
  if (!distribution.Has("mean")) return Err(distribution.Error("mean", "required"));
  ASSIGN_OR_RETURN(length.mean, distribution.Number("mean", 0, 1));
  if (length.mean > static_cast<double>(kMaxTokens)) {
    return Err(distribution.Error("mean", fmt::format("must be at most {}", kMaxTokens)));
  }
  ASSIGN_OR_RETURN(length.std_dev, distribution.Number("std_dev", 0, 0));
  if (distribution.Has("min")) {
    ASSIGN_OR_RETURN(length.min, Count(distribution, "min"));
  }
  if (distribution.Has("max")) {
    ASSIGN_OR_RETURN(length.max, Count(distribution, "max"));
  }
  if (length.min > length.max) return Err(distribution.Error("max", "must be >= min"));
  if (length.mean < length.min || length.mean > length.max) {
    return Err(distribution.Error("mean", "must lie within [min, max]"));
  }
  if (fixed && static_cast<double>(*fixed) != length.mean) {
    return Err(shared.Error(fixed_name, "disagrees with " + distribution_name + ".mean"));
  }
  return length;
}

// A number > 0.
Result<double> Positive(const FieldDecoder& object, std::string_view name) {
  ASSIGN_OR_RETURN(double value, object.Number(name, 0, 0));
  if (value <= 0) return Err(object.Error(name, "must be a number > 0"));
  return value;
}

// The fields of inference-perf's configuration that strata reads; inference-perf's others (its
// API, its server, its reports) are allowed and mean nothing here.
Result<SharedPrefixWorkload> DecodeSharedPrefixWorkload(const nlohmann::json& root) {
  ASSIGN_OR_RETURN(FieldDecoder top, FieldDecoder::OfAnyFields(root, ""));
  ASSIGN_OR_RETURN(FieldDecoder config, top.Mapping("config"));
  ASSIGN_OR_RETURN(FieldDecoder data, config.Mapping("data"));
  if (!data.Has("shared_prefix")) return Err(data.Error("shared_prefix", "required"));
  ASSIGN_OR_RETURN(FieldDecoder shared, data.Mapping("shared_prefix"));
  SharedPrefixWorkload workload;
  ASSIGN_OR_RETURN(workload.num_groups, Count(shared, "num_groups"));
  ASSIGN_OR_RETURN(workload.prompts_per_group, Count(shared, "num_prompts_per_group"));
  ASSIGN_OR_RETURN(workload.system_prompt_len, Count(shared, "system_prompt_len"));
  ASSIGN_OR_RETURN(workload.question_len, ReadLength(shared, "question"));
  ASSIGN_OR_RETURN(workload.output_len, ReadLength(shared, "output"));
  ASSIGN_OR_RETURN(workload.multi_turn_chat, shared.Bool("enable_multi_turn_chat", false));
  ASSIGN_OR_RETURN(FieldDecoder load, config.Mapping("load"));
  ASSIGN_OR_RETURN(std::span<const nlohmann::json> stages,
                   load.List("stages", Presence::kRequired));
  for (size_t i = 0; i < stages.size(); ++i) {
    ASSIGN_OR_RETURN(FieldDecoder fields,
                     FieldDecoder::OfAnyFields(stages[i], load.ItemPath("stages", i)));
    ASSIGN_OR_RETURN(double rate, Positive(fields, "rate"));
    ASSIGN_OR_RETURN(double duration, Positive(fields, "duration"));
    workload.stages.push_back({rate, duration});
  }
  return workload;
}

int DrawLength(const LengthDistribution& length, std::mt19937_64& random) {
  if (length.std_dev == 0) return static_cast<int>(std::lround(length.mean));
  std::normal_distribution<double> normal(length.mean, length.std_dev);
  const long drawn = std::lround(normal(random));
  return static_cast<int>(std::clamp<long>(drawn, length.min, length.max));
}

int BlocksOf(int tokens) { return (tokens + kBlockTokens - 1) / kBlockTokens; }

void AppendKeys(uint64_t base, int blocks, std::vector<uint64_t>* keys) {
  for (int b = 0; b < blocks; ++b) keys->push_back(base + static_cast<uint64_t>(b));
}

}  // namespace

Result<SharedPrefixWorkload> ReadSharedPrefixWorkload(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Err(NotFoundError("cannot open workload " + path));
  std::stringstream text;
  text << in.rdbuf();
  Result<std::vector<YamlDocument>> documents = ParseYamlDocuments(text.str());
  if (!documents) return Err(documents.error().WithPrefix(path));
  if (documents->empty()) return Err(InvalidArgumentError(path + ": empty file"));
  Result<SharedPrefixWorkload> workload = DecodeSharedPrefixWorkload(documents->front().value);
  if (!workload) return Err(workload.error().WithPrefix(path));
  return workload;
}

std::vector<TraceRequest> GenerateSharedPrefixTrace(const SharedPrefixWorkload& workload,
                                                    double rate_scale, uint64_t seed) {
  // Lengths and the session order come from a stream of their own, so that arrivals and prompt
  // picks stay the same whether lengths are fixed or drawn.
  std::mt19937_64 shapes(seed ^ 0x9e3779b97f4a7c15ull);
  const int prompts = workload.num_groups * workload.prompts_per_group;
  std::vector<int> question_tokens(prompts);
  std::vector<int> output_tokens(prompts);
  for (int group = 0; group < workload.num_groups; ++group) {
    const int first = group * workload.prompts_per_group;
    for (int p = 0; p < workload.prompts_per_group; ++p) {
      question_tokens[first + p] = DrawLength(workload.question_len, shapes);
    }
    for (int p = 0; p < workload.prompts_per_group; ++p) {
      output_tokens[first + p] = DrawLength(workload.output_len, shapes);
    }
  }
  std::vector<int> sessions(prompts);
  std::iota(sessions.begin(), sessions.end(), 0);
  if (workload.multi_turn_chat) std::shuffle(sessions.begin(), sessions.end(), shapes);

  std::mt19937_64 random(seed);
  std::uniform_int_distribution<int> pick_prompt(0, prompts - 1);
  std::vector<TraceRequest> trace;
  double stage_start = 0;
  const int system_blocks = BlocksOf(workload.system_prompt_len);
  for (const SharedPrefixWorkload::Stage& stage : workload.stages) {
    std::exponential_distribution<double> gap(stage.rate * rate_scale);
    for (double t = stage_start + gap(random); t < stage_start + stage.duration; t += gap(random)) {
      const size_t sent = trace.size();
      const int prompt = workload.multi_turn_chat ? sessions[sent % static_cast<size_t>(prompts)]
                                                  : pick_prompt(random);
      const size_t round = workload.multi_turn_chat ? sent / static_cast<size_t>(prompts) : 0;
      const int group = prompt / workload.prompts_per_group;
      const int question_blocks = BlocksOf(question_tokens[prompt]);
      const uint64_t question_key = kQuestionKeyBase + static_cast<uint64_t>(prompt) * 100000;
      TraceRequest request;
      request.arrival = Duration(static_cast<int64_t>(t * 1e9));
      request.output_tokens = output_tokens[prompt];
      request.block_tokens = kBlockTokens;
      AppendKeys(kSystemKeyBase + static_cast<uint64_t>(group) * 100000, system_blocks,
                 &request.block_keys);
      // A session asks its question again each round, after its earlier rounds' answers.
      for (size_t earlier = 0; earlier < round; ++earlier) {
        AppendKeys(question_key, question_blocks, &request.block_keys);
        AppendKeys(kAnswerKeyBase + (static_cast<uint64_t>(prompt) * 1000 + earlier) * 100000,
                   BlocksOf(output_tokens[prompt]), &request.block_keys);
      }
      AppendKeys(question_key, question_blocks, &request.block_keys);
      request.input_tokens = static_cast<int>(request.block_keys.size()) * kBlockTokens;
      trace.push_back(std::move(request));
    }
    stage_start += stage.duration;
  }
  return trace;
}

}  // namespace strata::sim
