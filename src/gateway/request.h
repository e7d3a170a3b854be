#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "gateway/config.h"

namespace strata::gateway {

// The OpenAI endpoints the gateway proxies.
enum class ApiKind { kChatCompletions, kCompletions };

// What the gateway needs from an OpenAI request body to route and account for it.
struct InferenceRequest {
  std::string model;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  int64_t max_tokens = 0;      // 0 when the client left it to the engine
  // The text an engine's prefix cache keys on: the prompt, or every message's content in order.
  std::string prompt_text;
};

// Parses a /v1/chat/completions or /v1/completions body. Returns kInvalidArgument naming the
// field ("messages[1].content: must be a string or a list of text parts") or the byte offset of
// a JSON syntax error. Thread-safe.
Result<InferenceRequest> ParseInferenceRequest(std::string_view body, ApiKind kind);

// The parameter an error of ParseInferenceRequest names ("temperature", "messages[1].content"),
// OpenAI's `param`; empty for an error about the whole body (not JSON, not an object).
std::string_view ParseErrorParam(const Status& error);

// The admission estimate of a request's tokens: prompt (about 4 bytes a token) plus its
// max_tokens, or `default_max_tokens` when it set none.
int64_t EstimateTokens(const InferenceRequest& request, int64_t default_max_tokens);

// Where a request goes: indices into GatewayConfig::models and its versions, and the LoRA
// adapter when the client named one instead of the base model.
struct Route {
  size_t model = 0;
  size_t version = 0;
  std::string adapter;
};

// Maps model names (and adapter names) to models and splits traffic between versions by
// weight. Built once from a validated set of models (ValidateModels), which must outlive it;
// immutable and thread-safe afterwards.
class ModelRouter {
 public:
  explicit ModelRouter(const std::vector<ModelConfig>& models);

  // Resolves `model`. `pinned_version` (the x-strata-version header), when not empty, selects
  // that version whatever its weight; otherwise `draw` in [0, 1) picks one by weight. Returns
  // kNotFound for an unknown model or version.
  Result<Route> Resolve(std::string_view model, std::string_view pinned_version, double draw) const;

  // The body of GET /v1/models: every model and adapter, OpenAI's list shape, each entry
  // {"id", "object": "model", "created", "owned_by"} (adapters add "parent").
  const std::string& ModelsListBody() const { return models_list_body_; }

  // The body of GET /v1/models/{id}: that entry of the list alone, or nullptr when `id` is
  // neither a model nor an adapter served here.
  const std::string* ModelBody(std::string_view id) const;

 private:
  const std::vector<ModelConfig>& models_;
  std::string models_list_body_;
  std::vector<std::pair<std::string, std::string>> model_bodies_;  // id, body
};

}  // namespace strata::gateway
