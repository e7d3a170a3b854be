#include "sim/trace_shared_prefix.h"

#include <fstream>
#include <random>
#include <sstream>

#include "common/yaml_json.h"

namespace strata::sim {
namespace {

constexpr int kBlockTokens = 16;
// Keys: groups' system prompts and questions, apart from Mooncake's ids and unique keys.
constexpr uint64_t kSystemKeyBase = 1ull << 60;
constexpr uint64_t kQuestionKeyBase = 1ull << 61;

const nlohmann::json* Find(const nlohmann::json& root, std::initializer_list<const char*> path) {
  const nlohmann::json* node = &root;
  for (const char* key : path) {
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
  }
  return node;
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
  for (Field field :
       {Field{"num_groups", &workload.num_groups},
        Field{"num_prompts_per_group", &workload.prompts_per_group},
        Field{"system_prompt_len", &workload.system_prompt_len},
        Field{"question_len", &workload.question_len}, Field{"output_len", &workload.output_len}}) {
    auto it = shared->find(field.name);
    if (it == shared->end() || !it->is_number_integer() || it->get<int64_t>() < 1 ||
        it->get<int64_t>() > 10'000'000) {
      return fail(std::string("config.data.shared_prefix.") + field.name,
                  "must be an integer >= 1");
    }
    *field.out = static_cast<int>(it->get<int64_t>());
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
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<int> pick_prompt(
      0, workload.num_groups * workload.prompts_per_group - 1);
  std::vector<TraceRequest> trace;
  double stage_start = 0;
  int system_blocks = (workload.system_prompt_len + kBlockTokens - 1) / kBlockTokens;
  int question_blocks = (workload.question_len + kBlockTokens - 1) / kBlockTokens;
  for (const SharedPrefixWorkload::Stage& stage : workload.stages) {
    std::exponential_distribution<double> gap(stage.rate * rate_scale);
    for (double t = stage_start + gap(random); t < stage_start + stage.duration; t += gap(random)) {
      int prompt = pick_prompt(random);
      int group = prompt / workload.prompts_per_group;
      TraceRequest request;
      request.arrival = Duration(static_cast<int64_t>(t * 1e9));
      // The system prompt fills whole blocks of its own, so a question never shares a block
      // with it; the token count is padded to the blocks' size accordingly.
      request.input_tokens = (system_blocks + question_blocks) * kBlockTokens;
      request.output_tokens = workload.output_len;
      request.block_tokens = kBlockTokens;
      for (int b = 0; b < system_blocks; ++b) {
        request.block_keys.push_back(kSystemKeyBase + static_cast<uint64_t>(group) * 100000 + b);
      }
      for (int b = 0; b < question_blocks; ++b) {
        request.block_keys.push_back(kQuestionKeyBase + static_cast<uint64_t>(prompt) * 100000 + b);
      }
      trace.push_back(std::move(request));
    }
    stage_start += stage.duration;
  }
  return trace;
}

}  // namespace strata::sim
