#include "gateway/request.h"

#include <fmt/format.h>

namespace strata::gateway {
namespace {

using nlohmann::json;

Status FieldError(std::string_view path, std::string_view message) {
  return InvalidArgumentError(fmt::format("{}: {}", path, message));
}

// Appends a message's content: a string, or a list of parts of which the text parts count.
Status AppendContent(const json& content, const std::string& path, std::string* out) {
  if (content.is_null()) return Status::Ok();
  if (content.is_string()) {
    out->append(content.get_ref<const std::string&>());
    return Status::Ok();
  }
  if (!content.is_array()) return FieldError(path, "must be a string or a list of text parts");
  for (const json& part : content) {
    if (!part.is_object()) return FieldError(path, "must be a string or a list of text parts");
    auto text = part.find("text");
    if (text != part.end() && text->is_string()) out->append(text->get_ref<const std::string&>());
  }
  return Status::Ok();
}

Status ReadPromptText(const json& body, ApiKind kind, std::string* out) {
  if (kind == ApiKind::kChatCompletions) {
    auto messages = body.find("messages");
    if (messages == body.end()) return FieldError("messages", "required");
    if (!messages->is_array() || messages->empty()) {
      return FieldError("messages", "must be a non-empty list");
    }
    for (size_t i = 0; i < messages->size(); ++i) {
      const json& message = (*messages)[i];
      const std::string path = fmt::format("messages[{}]", i);
      if (!message.is_object()) return FieldError(path, "must be an object");
      auto role = message.find("role");
      if (role == message.end() || !role->is_string()) {
        return FieldError(path + ".role", "must be a string");
      }
      // Role markers keep "user: x" and "system: x" apart in the prefix hash, as chat
      // templates do in the engine.
      out->append(role->get_ref<const std::string&>());
      out->push_back('\n');
      auto content = message.find("content");
      if (content != message.end()) {
        if (Status s = AppendContent(*content, path + ".content", out); !s.ok()) return s;
      }
      out->push_back('\n');
    }
    return Status::Ok();
  }
  auto prompt = body.find("prompt");
  if (prompt == body.end()) return FieldError("prompt", "required");
  if (prompt->is_string()) {
    out->append(prompt->get_ref<const std::string&>());
    return Status::Ok();
  }
  if (prompt->is_array()) {
    for (const json& item : *prompt) {
      if (!item.is_string()) return FieldError("prompt", "must be a string or a list of strings");
      out->append(item.get_ref<const std::string&>());
    }
    return Status::Ok();
  }
  return FieldError("prompt", "must be a string or a list of strings");
}

}  // namespace

Result<InferenceRequest> ParseInferenceRequest(std::string_view body, ApiKind kind) {
  json parsed;
  try {
    parsed = json::parse(body);
  } catch (const json::parse_error& e) {
    return Err(
        InvalidArgumentError(fmt::format("request body is not valid JSON (byte {})", e.byte)));
  }
  if (!parsed.is_object()) return Err(InvalidArgumentError("request body must be a JSON object"));
  InferenceRequest request;
  auto model = parsed.find("model");
  if (model == parsed.end()) return Err(FieldError("model", "required"));
  if (!model->is_string() || model->get_ref<const std::string&>().empty()) {
    return Err(FieldError("model", "must be a non-empty string"));
  }
  request.model = model->get<std::string>();
  if (auto stream = parsed.find("stream"); stream != parsed.end() && !stream->is_null()) {
    if (!stream->is_boolean()) return Err(FieldError("stream", "must be a boolean"));
    request.stream = stream->get<bool>();
  }
  if (auto options = parsed.find("stream_options");
      options != parsed.end() && options->is_object()) {
    auto include = options->find("include_usage");
    request.include_usage =
        include != options->end() && include->is_boolean() && include->get<bool>();
  }
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    auto it = parsed.find(key);
    if (it == parsed.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 0) {
      return Err(FieldError(key, "must be a non-negative integer"));
    }
    request.max_tokens = it->get<int64_t>();
  }
  if (Status s = ReadPromptText(parsed, kind, &request.prompt_text); !s.ok()) return Err(s);
  return request;
}

int64_t EstimateTokens(const InferenceRequest& request, int64_t default_max_tokens) {
  const int64_t prompt = static_cast<int64_t>((request.prompt_text.size() + 3) / 4);
  return prompt + (request.max_tokens > 0 ? request.max_tokens : default_max_tokens);
}

ModelRouter::ModelRouter(const GatewayConfig& config) : config_(config) {
  json data = json::array();
  for (const ModelConfig& model : config.models) {
    data.push_back({{"id", model.name}, {"object", "model"}, {"owned_by", "strata"}});
    for (const std::string& adapter : model.adapters) {
      data.push_back(
          {{"id", adapter}, {"object", "model"}, {"owned_by", "strata"}, {"parent", model.name}});
    }
  }
  models_list_body_ = json{{"object", "list"}, {"data", data}}.dump();
}

Result<Route> ModelRouter::Resolve(std::string_view model_name, std::string_view pinned_version,
                                   double draw) const {
  Route route;
  bool found = false;
  for (size_t m = 0; m < config_.models.size() && !found; ++m) {
    const ModelConfig& model = config_.models[m];
    if (model.name == model_name) {
      route.model = m;
      found = true;
    }
    for (const std::string& adapter : model.adapters) {
      if (!found && adapter == model_name) {
        route.model = m;
        route.adapter = adapter;
        found = true;
      }
    }
  }
  if (!found) {
    return Err(NotFoundError(fmt::format("model \"{}\" is not served here", model_name)));
  }
  const ModelConfig& model = config_.models[route.model];
  if (!pinned_version.empty()) {
    for (size_t v = 0; v < model.versions.size(); ++v) {
      if (model.versions[v].name == pinned_version) {
        route.version = v;
        return route;
      }
    }
    return Err(NotFoundError(fmt::format("x-strata-version: model \"{}\" has no version \"{}\"",
                                         model.name, pinned_version)));
  }
  int64_t total = 0;
  for (const VersionConfig& version : model.versions) total += version.weight;
  // Configuration validation guarantees total > 0.
  double point = draw * static_cast<double>(total);
  for (size_t v = 0; v < model.versions.size(); ++v) {
    point -= static_cast<double>(model.versions[v].weight);
    if (point < 0) {
      route.version = v;
      return route;
    }
  }
  // draw rounding up to 1.0: the last version with weight.
  for (size_t v = model.versions.size(); v-- > 0;) {
    if (model.versions[v].weight > 0) {
      route.version = v;
      break;
    }
  }
  return route;
}

}  // namespace strata::gateway
