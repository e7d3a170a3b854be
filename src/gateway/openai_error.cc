#include "gateway/openai_error.h"

#include <nlohmann/json.hpp>

namespace strata::gateway {

std::string_view OpenAIErrorType(int status) {
  if (status == 401) return "authentication_error";
  if (status == 429) return "rate_limit_exceeded";
  if (status == 503) return "service_unavailable";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

std::string OpenAIErrorBody(int status, std::string_view message, std::string_view param,
                            std::string_view code) {
  using nlohmann::json;
  // OpenAI's clients read these four keys whatever the error; absent ones are null, not missing.
  json error = {{"message", message},
                {"type", OpenAIErrorType(status)},
                {"param", param.empty() ? json(nullptr) : json(param)},
                {"code", code.empty() ? json(nullptr) : json(code)}};
  return json{{"error", std::move(error)}}.dump();
}

}  // namespace strata::gateway
