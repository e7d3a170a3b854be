#include "engine/openai_protocol.h"

#include <nlohmann/json.hpp>

namespace strata::engine {
namespace {

using nlohmann::json;

Status Invalid(std::string field, std::string what) {
  return InvalidArgumentError(field + ": " + what);
}

Result<int> PositiveInt(const json& body, const char* field, int default_value) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return default_value;
  if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > 1'000'000) {
    return Err(Invalid(field, "must be an integer between 1 and 1000000"));
  }
  return static_cast<int>(it->get<int64_t>());
}

Result<std::string> Prompt(const json& body) {
  auto it = body.find("prompt");
  if (it == body.end()) return Err(Invalid("prompt", "is required"));
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array() && it->size() == 1 && (*it)[0].is_string()) return (*it)[0].get<std::string>();
  return Err(Invalid("prompt", "must be a string (or a list of exactly one string)"));
}

// A message's content: a string, or OpenAI's list of parts ([{"type": "text", "text": ...}]),
// whose texts are joined. The simulator serves a text model, so any other part (image_url,
// input_audio...) is refused naming it, as vLLM refuses images for a model without a vision
// encoder.
Result<std::string> ContentText(const json& content, const std::string& field) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) return Err(Invalid(field, "must be a string or a list of text parts"));
  std::string text;
  for (size_t j = 0; j < content.size(); ++j) {
    const json& part = content[j];
    const std::string part_field = field + "[" + std::to_string(j) + "]";
    auto type = part.is_object() ? part.find("type") : part.end();
    if (!part.is_object() || type == part.end() || !type->is_string()) {
      return Err(Invalid(part_field + ".type", "must be a string"));
    }
    if (*type != "text") {
      return Err(Invalid(part_field + ".type",
                         "\"" + type->get<std::string>() +
                             "\" is not supported: this engine serves a text-only model"));
    }
    auto part_text = part.find("text");
    if (part_text == part.end() || !part_text->is_string()) {
      return Err(Invalid(part_field + ".text", "must be a string"));
    }
    text += part_text->get<std::string>();
  }
  return text;
}

Result<std::string> RenderMessages(const json& body) {
  auto it = body.find("messages");
  if (it == body.end()) return Err(Invalid("messages", "is required"));
  if (!it->is_array() || it->empty()) return Err(Invalid("messages", "must be a non-empty list"));
  std::string text;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& message = (*it)[i];
    std::string field = "messages[" + std::to_string(i) + "]";
    if (!message.is_object()) return Err(Invalid(field, "must be an object"));
    auto role = message.find("role");
    if (role == message.end() || !role->is_string()) {
      return Err(Invalid(field + ".role", "must be a string"));
    }
    auto content = message.find("content");
    if (content == message.end()) {
      return Err(Invalid(field + ".content", "must be a string or a list of text parts"));
    }
    ASSIGN_OR_RETURN(std::string content_text, ContentText(*content, field + ".content"));
    text += "<|" + role->get<std::string>() + "|>\n" + content_text + "\n";
  }
  return text + "<|assistant|>\n";
}

json Usage(int prompt_tokens, int completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"total_tokens", prompt_tokens + completion_tokens},
          {"completion_tokens", completion_tokens},
          {"prompt_tokens_details", nullptr}};
}

json Envelope(const CompletionIdentity& identity, bool chunk) {
  std::string object =
      identity.chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
  return {{"id", identity.id},
          {"object", object},
          {"created", identity.created},
          {"model", identity.model}};
}

// Never throws: text a client sent (a model name in an error) may not be valid UTF-8.
std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json FinishReason(std::string_view reason) {
  return reason.empty() ? json(nullptr) : json(std::string(reason));
}

}  // namespace

Result<CompletionRequest> ParseCompletionRequest(std::string_view body_text, bool chat) {
  json body = json::parse(body_text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return Err(InvalidArgumentError("body: not valid JSON"));
  if (!body.is_object()) return Err(InvalidArgumentError("body: must be a JSON object"));
  CompletionRequest request;
  request.chat = chat;
  auto model = body.find("model");
  if (model == body.end() || !model->is_string() || model->get<std::string>().empty()) {
    return Err(Invalid("model", "is required and must be a non-empty string"));
  }
  request.model = model->get<std::string>();
  if (chat) {
    ASSIGN_OR_RETURN(request.prompt_text, RenderMessages(body));
    // max_completion_tokens is the newer name; max_tokens still wins when both are given.
    ASSIGN_OR_RETURN(int completion_tokens,
                     PositiveInt(body, "max_completion_tokens", kDefaultChatMaxTokens));
    ASSIGN_OR_RETURN(request.max_tokens, PositiveInt(body, "max_tokens", completion_tokens));
  } else {
    ASSIGN_OR_RETURN(request.prompt_text, Prompt(body));
    ASSIGN_OR_RETURN(request.max_tokens,
                     PositiveInt(body, "max_tokens", kDefaultCompletionMaxTokens));
  }
  ASSIGN_OR_RETURN(int n, PositiveInt(body, "n", 1));
  if (n != 1) return Err(Invalid("n", "only 1 is supported"));
  if (body.contains("best_of") && !body["best_of"].is_null() && body["best_of"] != 1) {
    return Err(Invalid("best_of", "only 1 is supported"));
  }
  auto stream = body.find("stream");
  if (stream != body.end() && !stream->is_null()) {
    if (!stream->is_boolean()) return Err(Invalid("stream", "must be a boolean"));
    request.stream = stream->get<bool>();
  }
  auto options = body.find("stream_options");
  if (options != body.end() && !options->is_null()) {
    if (!options->is_object()) return Err(Invalid("stream_options", "must be an object"));
    if (!request.stream) return Err(Invalid("stream_options", "is only allowed with stream"));
    auto include = options->find("include_usage");
    if (include != options->end() && !include->is_null()) {
      if (!include->is_boolean()) {
        return Err(Invalid("stream_options.include_usage", "must be a boolean"));
      }
      request.include_usage = include->get<bool>();
    }
  }
  return request;
}

std::string StreamChunk(const CompletionIdentity& identity, std::string_view text,
                        std::string_view finish_reason) {
  json chunk = Envelope(identity, /*chunk=*/true);
  json choice = {
      {"index", 0}, {"logprobs", nullptr}, {"finish_reason", FinishReason(finish_reason)}};
  if (identity.chat) {
    choice["delta"] = {{"content", std::string(text)}};
  } else {
    choice["text"] = std::string(text);
    choice["stop_reason"] = nullptr;
  }
  chunk["choices"] = json::array({choice});
  if (identity.include_usage) chunk["usage"] = nullptr;
  return Dump(chunk);
}

std::string ChatRoleChunk(const CompletionIdentity& identity) {
  json chunk = Envelope(identity, /*chunk=*/true);
  chunk["choices"] = json::array({{{"index", 0},
                                   {"delta", {{"role", "assistant"}, {"content", ""}}},
                                   {"logprobs", nullptr},
                                   {"finish_reason", nullptr}}});
  if (identity.include_usage) chunk["usage"] = nullptr;
  return Dump(chunk);
}

std::string UsageChunk(const CompletionIdentity& identity, int prompt_tokens,
                       int completion_tokens) {
  json chunk = Envelope(identity, /*chunk=*/true);
  chunk["choices"] = json::array();
  chunk["usage"] = Usage(prompt_tokens, completion_tokens);
  return Dump(chunk);
}

std::string FullResponse(const CompletionIdentity& identity, std::string_view text,
                         std::string_view finish_reason, int prompt_tokens, int completion_tokens) {
  json response = Envelope(identity, /*chunk=*/false);
  json choice = {{"index", 0},
                 {"logprobs", nullptr},
                 {"finish_reason", FinishReason(finish_reason)},
                 {"stop_reason", nullptr}};
  if (identity.chat) {
    choice["message"] = {{"role", "assistant"}, {"content", std::string(text)}};
  } else {
    choice["text"] = std::string(text);
  }
  response["choices"] = json::array({choice});
  response["usage"] = Usage(prompt_tokens, completion_tokens);
  return Dump(response);
}

std::string ErrorBody(std::string_view message, std::string_view type, std::string_view param,
                      int code) {
  json error = {{"message", std::string(message)},
                {"type", std::string(type)},
                {"param", param.empty() ? json(nullptr) : json(std::string(param))},
                {"code", code}};
  return Dump(json{{"error", error}});
}

std::string ParamOf(std::string_view message) {
  size_t colon = message.find(": ");
  if (colon == std::string_view::npos) return "";
  std::string_view field = message.substr(0, colon);
  return field == "body" ? "" : std::string(field);
}

}  // namespace strata::engine
