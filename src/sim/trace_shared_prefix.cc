#include "sim/trace_shared_prefix.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <sstream>

#include "common/yaml_json.h"

namespace strata::sim {
namespace {

constexpr int kBlockTokens = 16;
// Keys: groups' system prompts and questions, apart from Mooncake's ids and unique keys.
constexpr uint64_t kSystemKeyBase = 1ull << 60;
constexpr uint64_t kQuestionKeyBase = 1ull << 61;
constexpr uint64_t kAnswerKeyBase = 3ull << 60;
constexpr int64_t kMaxTokens = 10'000'000;

const nlohmann::json* Find(const nlohmann::json& root, std::initializer_list<const char*> path) {
  const nlohmann::json* node = &root;
  for (const char* key : path) {
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
  }
  return node;
}

using FieldError = std::function<Status(const std::string& field, const std::string& what)>;

bool IsCount(const nlohmann::json& value, int64_t min) {
  return value.is_number_integer() && value.get<int64_t>() >= min &&
         value.get<int64_t>() <= kMaxTokens;
}

// Reads `<name>_len` and/or `<name>_distribution` of the shared_prefix object into *out.
Status ReadLength(const nlohmann::json& shared, const std::string& name, const FieldError& fail,
                  LengthDistribution* out) {
  const std::string prefix = "config.data.shared_prefix.";
  const std::string fixed_name = name + "_len";
  const std::string distribution_name = name + "_distribution";
  auto fixed = shared.find(fixed_name);
  auto distribution = shared.find(distribution_name);
  if (fixed != shared.end() && !IsCount(*fixed, 1)) {
    return fail(prefix + fixed_name, "must be an integer >= 1");
  }
  if (distribution == shared.end()) {
    if (fixed == shared.end()) {
      return fail(prefix + fixed_name,
                  "must be an integer >= 1 (or give " + distribution_name + ")");
    }
    const int length = static_cast<int>(fixed->get<int64_t>());
    *out = {static_cast<double>(length), 0, length, length};
    return Status::Ok();
  }
  const std::string field = prefix + distribution_name;
  if (!distribution->is_object()) return fail(field, "must be a map of mean, std_dev, min, max");
  for (const auto& [key, value] : distribution->items()) {
    if (key != "mean" && key != "std_dev" && key != "min" && key != "max") {
      return fail(field + "." + key, "unknown field (expected mean, std_dev, min, max)");
    }
  }
  LengthDistribution length{0, 0, 1, static_cast<int>(kMaxTokens)};
  auto mean = distribution->find("mean");
  if (mean == distribution->end() || !mean->is_number() || mean->get<double>() < 1 ||
      mean->get<double>() > static_cast<double>(kMaxTokens)) {
    return fail(field + ".mean", "must be a number >= 1");
  }
  length.mean = mean->get<double>();
  if (auto std_dev = distribution->find("std_dev"); std_dev != distribution->end()) {
    if (!std_dev->is_number() || std_dev->get<double>() < 0) {
      return fail(field + ".std_dev", "must be a number >= 0");
    }
    length.std_dev = std_dev->get<double>();
  }
  for (auto [key, bound] : {std::pair{"min", &length.min}, std::pair{"max", &length.max}}) {
    auto it = distribution->find(key);
    if (it == distribution->end()) continue;
    if (!IsCount(*it, 1)) return fail(field + "." + key, "must be an integer >= 1");
    *bound = static_cast<int>(it->get<int64_t>());
  }
  if (length.min > length.max) return fail(field + ".max", "must be >= min");
  if (length.mean < length.min || length.mean > length.max) {
    return fail(field + ".mean", "must lie within [min, max]");
  }
  if (fixed != shared.end() && static_cast<double>(fixed->get<int64_t>()) != length.mean) {
    return fail(prefix + fixed_name, "disagrees with " + distribution_name + ".mean");
  }
  *out = length;
  return Status::Ok();
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
  const nlohmann::json& root = documents->front().value;
  auto fail = [&](const std::string& field, const std::string& what) {
    return Err(InvalidArgumentError(path + ": " + field + ": " + what));
  };
  SharedPrefixWorkload workload;
  const nlohmann::json* shared = Find(root, {"config", "data", "shared_prefix"});
  if (shared == nullptr || !shared->is_object()) {
    return fail("config.data.shared_prefix", "is required");
  }
  struct Field {
    const char* name;
    int* out;
  };
  for (Field field : {Field{"num_groups", &workload.num_groups},
                      Field{"num_prompts_per_group", &workload.prompts_per_group},
                      Field{"system_prompt_len", &workload.system_prompt_len}}) {
    auto it = shared->find(field.name);
    if (it == shared->end() || !IsCount(*it, 1)) {
      return fail(std::string("config.data.shared_prefix.") + field.name,
                  "must be an integer >= 1");
    }
    *field.out = static_cast<int>(it->get<int64_t>());
  }
  FieldError field_error = [&](const std::string& field, const std::string& what) {
    return InvalidArgumentError(path + ": " + field + ": " + what);
  };
  RETURN_IF_ERROR(ReadLength(*shared, "question", field_error, &workload.question_len));
  RETURN_IF_ERROR(ReadLength(*shared, "output", field_error, &workload.output_len));
  if (auto multi_turn = shared->find("enable_multi_turn_chat"); multi_turn != shared->end()) {
    if (!multi_turn->is_boolean()) {
      return fail("config.data.shared_prefix.enable_multi_turn_chat", "must be true or false");
    }
    workload.multi_turn_chat = multi_turn->get<bool>();
  }
  const nlohmann::json* stages = Find(root, {"config", "load", "stages"});
  if (stages == nullptr || !stages->is_array() || stages->empty()) {
    return fail("config.load.stages", "must be a non-empty list");
  }
  for (size_t i = 0; i < stages->size(); ++i) {
    const nlohmann::json& stage = (*stages)[i];
    std::string field = "config.load.stages[" + std::to_string(i) + "]";
    const nlohmann::json* rate = Find(stage, {"rate"});
    const nlohmann::json* duration = Find(stage, {"duration"});
    if (rate == nullptr || !rate->is_number() || rate->get<double>() <= 0) {
      return fail(field + ".rate", "must be a number > 0");
    }
    if (duration == nullptr || !duration->is_number() || duration->get<double>() <= 0) {
      return fail(field + ".duration", "must be a number > 0");
    }
    workload.stages.push_back({rate->get<double>(), duration->get<double>()});
  }
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
