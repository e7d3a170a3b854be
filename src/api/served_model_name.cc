#include "api/served_model_name.h"

#include <sstream>

namespace strata::api {
namespace {

// The words a shell script's `-c` argument would run, split at blanks: enough for the one-line
// `vllm serve ...` scripts manifests carry (no quoting inside model names).
std::vector<std::string> Words(const std::string& script) {
  std::istringstream in(script);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::vector<std::string> CommandLine(const ProcessTemplate& engine) {
  std::vector<std::string> argv = engine.command;
  argv.insert(argv.end(), engine.args.begin(), engine.args.end());
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == "-c" && (argv[i + 1].find("vllm") != std::string::npos ||
                            argv[i + 1].find("engine-sim") != std::string::npos)) {
      return Words(argv[i + 1]);
    }
  }
  return argv;
}

bool IsFlag(const std::string& word) { return word.size() > 1 && word[0] == '-'; }

// The values of `flag` at argv[i] (`--flag v1 v2` or `--flag=v1`), or none when argv[i] is not it.
std::vector<std::string> FlagValues(const std::vector<std::string>& argv, size_t i,
                                    const std::string& flag, bool many) {
  const std::string& word = argv[i];
  if (word.starts_with(flag + "=")) return {word.substr(flag.size() + 1)};
  if (word != flag) return {};
  std::vector<std::string> values;
  for (size_t j = i + 1; j < argv.size() && !IsFlag(argv[j]); ++j) {
    values.push_back(argv[j]);
    if (!many) break;
  }
  return values;
}

}  // namespace

std::vector<std::string> VllmServedModelNames(const ProcessTemplate& engine) {
  const std::vector<std::string> argv = CommandLine(engine);
  std::vector<std::string> served;
  std::vector<std::string> model;
  std::string positional;
  bool vllm = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    const bool vllm_binary = word == "vllm" || word.ends_with("/vllm");
    if (vllm_binary && i + 1 < argv.size() && argv[i + 1] == "serve") {
      vllm = true;
      if (i + 2 < argv.size() && !IsFlag(argv[i + 2])) positional = argv[i + 2];
    }
    if (word == "vllm.entrypoints.openai.api_server") vllm = true;
    // strata's simulated engine answers to its --model as vLLM answers to its served name.
    const bool strata_binary = word == "strata" || word.ends_with("/strata");
    if (strata_binary && i + 1 < argv.size() && argv[i + 1] == "engine-sim") vllm = true;
    if (auto values = FlagValues(argv, i, "--served-model-name", true); !values.empty()) {
      served = values;
    }
    if (auto values = FlagValues(argv, i, "--model", false); !values.empty()) model = values;
  }
  if (!vllm) return {};
  if (!served.empty()) return served;
  if (!model.empty()) return model;
  if (!positional.empty()) return {positional};
  return {};
}

}  // namespace strata::api
