#include "gateway/request.h"

#include <fmt/format.h>

#include <array>
#include <ctime>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/field_decoder.h"
#include "common/json_reader.h"

namespace strata::gateway {
namespace {

constexpr std::string_view kNonNegativeInteger = "must be a non-negative integer";
constexpr std::string_view kContentShape = "must be a string or a list of text parts";
constexpr std::string_view kPromptShape = "must be a string or a list of strings";

enum class ParameterType { kNumber, kInteger, kPositiveInteger, kString, kStringOrStrings };

struct TypedParameter {
  std::string_view name;
  ParameterType type;
  std::string_view message;
};

// Known OpenAI parameters the engine acts on, checked for their JSON type (null counts as
// absent, as in OpenAI's API); their ranges are the engine's to check. Errors are reported in
// this order.
constexpr TypedParameter kTypedParameters[] = {
    {"temperature", ParameterType::kNumber, "must be a number"},
    {"top_p", ParameterType::kNumber, "must be a number"},
    {"n", ParameterType::kPositiveInteger, "must be a positive integer"},
    {"presence_penalty", ParameterType::kNumber, "must be a number"},
    {"frequency_penalty", ParameterType::kNumber, "must be a number"},
    {"seed", ParameterType::kInteger, "must be an integer"},
    {"stop", ParameterType::kStringOrStrings, "must be a string or a list of strings"},
    {"user", ParameterType::kString, "must be a string"},
};

const TypedParameter* FindTypedParameter(std::string_view key) {
  for (const TypedParameter& parameter : kTypedParameters) {
    if (parameter.name == key) return &parameter;
  }
  return nullptr;
}

// Reads what routing needs from a request body in one pass, without building a document: a body
// is mostly prompt text, which is copied once, into prompt_text; every other value is skipped
// (and validated) as the reader passes it. Field errors are remembered and reported after the
// whole body was read, in the order a reader checks them (model, stream, max_tokens, then the
// prompt), so that a JSON syntax error anywhere wins.
class RequestReader {
 public:
  RequestReader(std::string_view body, ApiKind kind, InferenceRequest* out)
      : reader_(body), kind_(kind), out_(out) {}

  Status Read();

 private:
  enum class Field { kMissing, kValid, kInvalid };

  void ReadModel();
  void ReadStream();
  void ReadStreamOptions();
  // max_tokens or max_completion_tokens: sets `*value`, or `*invalid` when it is not a
  // non-negative integer (null counts as absent).
  void ReadTokenLimit(std::optional<int64_t>* value, bool* invalid);
  // A known parameter the gateway does not use itself, checked for its type so that a client
  // hears of `"temperature": "hot"` from the gateway, naming it, as from OpenAI.
  void ReadTypedParameter(size_t index);
  void ReadMessages();
  void ReadMessage(size_t index);
  // Appends a message's content to `out`: a string, or a list of parts of which the text parts
  // count. Returns false when it has another shape.
  bool ReadContent(std::string* out);
  void ReadPrompt();
  void SetPromptError(Status status) {
    if (!prompt_error_) prompt_error_ = std::move(status);
  }

  JsonReader reader_;
  ApiKind kind_;
  InferenceRequest* out_;
  Field model_ = Field::kMissing;
  bool stream_invalid_ = false;
  bool stream_options_invalid_ = false;  // not an object, or include_usage not a boolean
  std::optional<int64_t> max_tokens_, max_completion_tokens_;
  bool max_tokens_invalid_ = false, max_completion_tokens_invalid_ = false;
  bool prompt_seen_ = false;
  std::optional<Status> prompt_error_;
  std::array<bool, std::size(kTypedParameters)> typed_invalid_{};
};

void RequestReader::ReadTypedParameter(size_t index) {
  const JsonType type = reader_.Peek();
  bool valid = type == JsonType::kNull;
  switch (kTypedParameters[index].type) {
    case ParameterType::kNumber:
      valid = valid || type == JsonType::kNumber;
      break;
    case ParameterType::kPositiveInteger:
      if (type == JsonType::kNumber) {
        int64_t number = 0;
        valid = reader_.ReadInteger(&number) && number >= 1;
        typed_invalid_[index] = !valid;
        return;
      }
      break;
    case ParameterType::kInteger:
      if (type == JsonType::kNumber) {
        int64_t number = 0;
        valid = reader_.ReadInteger(&number);
        typed_invalid_[index] = !valid;
        return;
      }
      break;
    case ParameterType::kString:
      valid = valid || type == JsonType::kString;
      break;
    case ParameterType::kStringOrStrings:
      if (type == JsonType::kArray) {
        reader_.BeginArray();
        valid = true;
        while (reader_.NextElement()) {
          valid = valid && reader_.Peek() == JsonType::kString;
          reader_.Skip();
        }
        typed_invalid_[index] = !valid;
        return;
      }
      valid = valid || type == JsonType::kString;
      break;
  }
  typed_invalid_[index] = !valid;
  reader_.Skip();
}

void RequestReader::ReadModel() {
  model_ = Field::kInvalid;
  out_->model.clear();
  if (reader_.Peek() != JsonType::kString) return reader_.Skip();
  if (reader_.ReadString(&out_->model) && !out_->model.empty()) model_ = Field::kValid;
}

void RequestReader::ReadStream() {
  const JsonType type = reader_.Peek();
  out_->stream = false;
  stream_invalid_ = type != JsonType::kBool && type != JsonType::kNull;
  if (type == JsonType::kBool) {
    reader_.ReadBool(&out_->stream);
  } else {
    reader_.Skip();
  }
}

void RequestReader::ReadStreamOptions() {
  out_->include_usage = false;
  const JsonType type = reader_.Peek();
  stream_options_invalid_ = type != JsonType::kObject && type != JsonType::kNull;
  if (type != JsonType::kObject) return reader_.Skip();
  reader_.BeginObject();
  std::string_view key;
  std::string scratch;
  while (reader_.NextKey(&key, &scratch)) {
    if (key != "include_usage") {
      reader_.Skip();
      continue;
    }
    const JsonType value = reader_.Peek();
    if (value == JsonType::kBool) {
      reader_.ReadBool(&out_->include_usage);
    } else {
      stream_options_invalid_ = stream_options_invalid_ || value != JsonType::kNull;
      reader_.Skip();
    }
  }
}

void RequestReader::ReadTokenLimit(std::optional<int64_t>* value, bool* invalid) {
  value->reset();
  const JsonType type = reader_.Peek();
  *invalid = type != JsonType::kNull;
  if (type != JsonType::kNumber) return reader_.Skip();
  int64_t number = 0;
  if (reader_.ReadInteger(&number) && number >= 0) {
    *value = number;
    *invalid = false;
  }
}

bool RequestReader::ReadContent(std::string* out) {
  switch (reader_.Peek()) {
    case JsonType::kString:
      reader_.ReadString(out);
      return true;
    case JsonType::kNull:
      reader_.Skip();
      return true;
    case JsonType::kArray:
      break;
    default:
      reader_.Skip();
      return false;
  }
  // OpenAI's parts: [{"type": "text", "text": ...}, {"type": "image_url", ...}]. Text parts count
  // for accounting and the prefix hash; the others go to the engine as they are, which serves
  // them or refuses them itself (the gateway forwards the body unchanged).
  reader_.BeginArray();
  bool valid = true;
  while (reader_.NextElement()) {
    if (reader_.Peek() != JsonType::kObject) {
      reader_.Skip();
      valid = false;
      continue;
    }
    reader_.BeginObject();
    std::string_view key;
    std::string scratch;
    std::optional<std::string> type;
    std::optional<std::string> text;
    while (reader_.NextKey(&key, &scratch)) {
      if (key == "type" && reader_.Peek() == JsonType::kString) {
        reader_.ReadString(&type.emplace());
      } else if (key == "text" && reader_.Peek() == JsonType::kString) {
        reader_.ReadString(&text.emplace());
      } else {
        reader_.Skip();
      }
    }
    if (!type || (*type == "text" && !text)) {
      valid = false;
    } else if (*type == "text") {
      out->append(*text);
    }
  }
  return valid;
}

// Role markers keep "user: x" and "system: x" apart in the prefix hash, as chat templates do in
// the engine. The role usually comes first; content that comes before it waits in `early`.
void RequestReader::ReadMessage(size_t index) {
  if (reader_.Peek() != JsonType::kObject) {
    reader_.Skip();
    return SetPromptError(InvalidField(fmt::format("messages[{}]", index), "must be an object"));
  }
  std::string& prompt = out_->prompt_text;
  std::optional<std::string> role;
  bool role_written = false;
  bool content_seen = false;
  bool content_valid = true;
  std::string early;
  reader_.BeginObject();
  std::string_view key;
  std::string scratch;
  while (reader_.NextKey(&key, &scratch)) {
    if (key == "role" && reader_.Peek() == JsonType::kString) {
      role.emplace();
      reader_.ReadString(&*role);
      if (!content_seen && !role_written) {
        prompt.append(*role);
        prompt.push_back('\n');
        role_written = true;
      }
    } else if (key == "content") {
      content_seen = true;
      content_valid = ReadContent(role_written ? &prompt : &early) && content_valid;
    } else {
      reader_.Skip();
    }
  }
  if (!role) {
    return SetPromptError(
        InvalidField(fmt::format("messages[{}].role", index), "must be a string"));
  }
  if (!content_valid) {
    return SetPromptError(InvalidField(fmt::format("messages[{}].content", index), kContentShape));
  }
  if (!role_written) {
    prompt.append(*role);
    prompt.push_back('\n');
    prompt.append(early);
  }
  prompt.push_back('\n');
}

void RequestReader::ReadMessages() {
  if (reader_.Peek() != JsonType::kArray) {
    reader_.Skip();
    return SetPromptError(InvalidField("messages", "must be a non-empty list"));
  }
  reader_.BeginArray();
  size_t count = 0;
  while (reader_.NextElement()) ReadMessage(count++);
  if (count == 0) SetPromptError(InvalidField("messages", "must be a non-empty list"));
}

void RequestReader::ReadPrompt() {
  const JsonType type = reader_.Peek();
  if (type == JsonType::kString) {
    reader_.ReadString(&out_->prompt_text);
    return;
  }
  if (type != JsonType::kArray) {
    reader_.Skip();
    return SetPromptError(InvalidField("prompt", kPromptShape));
  }
  reader_.BeginArray();
  while (reader_.NextElement()) {
    if (reader_.Peek() == JsonType::kString) {
      reader_.ReadString(&out_->prompt_text);
    } else {
      reader_.Skip();
      SetPromptError(InvalidField("prompt", kPromptShape));
    }
  }
}

Status RequestReader::Read() {
  const bool object = reader_.Peek() == JsonType::kObject;
  if (object) {
    reader_.BeginObject();
    std::string_view key;
    std::string scratch;
    const std::string_view prompt_key = kind_ == ApiKind::kChatCompletions ? "messages" : "prompt";
    while (reader_.NextKey(&key, &scratch)) {
      if (key == "model") {
        ReadModel();
      } else if (key == "stream") {
        ReadStream();
      } else if (key == "stream_options") {
        ReadStreamOptions();
      } else if (key == "max_tokens") {
        ReadTokenLimit(&max_tokens_, &max_tokens_invalid_);
      } else if (key == "max_completion_tokens") {
        ReadTokenLimit(&max_completion_tokens_, &max_completion_tokens_invalid_);
      } else if (const TypedParameter* typed = FindTypedParameter(key)) {
        ReadTypedParameter(static_cast<size_t>(typed - kTypedParameters));
      } else if (key == prompt_key) {
        // A repeated key counts once, the last time, as in a document.
        prompt_seen_ = true;
        prompt_error_.reset();
        out_->prompt_text.clear();
        if (kind_ == ApiKind::kChatCompletions) {
          ReadMessages();
        } else {
          ReadPrompt();
        }
      } else {
        reader_.Skip();
      }
    }
  } else {
    reader_.Skip();
  }
  if (Status syntax = reader_.Finish(); !syntax.ok()) {
    return InvalidArgumentError("request body is " + syntax.message());
  }
  if (!object) return InvalidArgumentError("request body must be a JSON object");
  if (model_ == Field::kMissing) return InvalidField("model", "required");
  if (model_ == Field::kInvalid) return InvalidField("model", "must be a non-empty string");
  if (stream_invalid_) return InvalidField("stream", "must be a boolean");
  if (stream_options_invalid_) {
    return InvalidField("stream_options", "must be an object whose include_usage is a boolean");
  }
  if (max_tokens_invalid_) return InvalidField("max_tokens", kNonNegativeInteger);
  if (max_completion_tokens_invalid_) {
    return InvalidField("max_completion_tokens", kNonNegativeInteger);
  }
  for (size_t i = 0; i < std::size(kTypedParameters); ++i) {
    if (typed_invalid_[i])
      return InvalidField(kTypedParameters[i].name, kTypedParameters[i].message);
  }
  if (!prompt_seen_) {
    return InvalidField(kind_ == ApiKind::kChatCompletions ? "messages" : "prompt", "required");
  }
  if (prompt_error_) return *prompt_error_;
  // max_completion_tokens is the newer name for the same limit: it wins.
  out_->max_tokens = max_completion_tokens_.value_or(max_tokens_.value_or(0));
  return Status::Ok();
}

}  // namespace

Result<InferenceRequest> ParseInferenceRequest(std::string_view body, ApiKind kind) {
  InferenceRequest request;
  // The prompt text is never longer than the body it comes from: one allocation, not one per
  // doubling.
  request.prompt_text.reserve(body.size());
  if (Status status = RequestReader(body, kind, &request).Read(); !status.ok()) {
    return Err(status);
  }
  return request;
}

int64_t EstimateTokens(const InferenceRequest& request, int64_t default_max_tokens) {
  const int64_t prompt = static_cast<int64_t>((request.prompt_text.size() + 3) / 4);
  return prompt + (request.max_tokens > 0 ? request.max_tokens : default_max_tokens);
}

std::string_view ParseErrorParam(const Status& error) {
  // Every field error is "<path>: <what>" (FieldError); the body's own errors say "request body".
  std::string_view message = error.message();
  if (message.starts_with("request body")) return {};
  const size_t colon = message.find(": ");
  return colon == std::string_view::npos ? std::string_view() : message.substr(0, colon);
}

ModelRouter::ModelRouter(const std::vector<ModelConfig>& models) : models_(models) {
  using nlohmann::json;
  // OpenAI's `created` is when the model was made available; routes change at run time, so the
  // gateway says when it started serving, the same figure for every table it builds.
  static const int64_t created = static_cast<int64_t>(std::time(nullptr));
  json data = json::array();
  auto add = [&](const std::string& id, const std::string* parent) {
    json entry = {{"id", id}, {"object", "model"}, {"created", created}, {"owned_by", "strata"}};
    if (parent != nullptr) entry["parent"] = *parent;
    model_bodies_.emplace_back(id, entry.dump());
    data.push_back(std::move(entry));
  };
  for (const ModelConfig& model : models_) {
    add(model.name, nullptr);
    for (const std::string& adapter : model.adapters) add(adapter, &model.name);
  }
  models_list_body_ = json{{"object", "list"}, {"data", data}}.dump();
}

const std::string* ModelRouter::ModelBody(std::string_view id) const {
  for (const auto& [model_id, body] : model_bodies_) {
    if (model_id == id) return &body;
  }
  return nullptr;
}

Result<Route> ModelRouter::Resolve(std::string_view model_name, std::string_view pinned_version,
                                   double draw) const {
  Route route;
  bool found = false;
  for (size_t m = 0; m < models_.size() && !found; ++m) {
    const ModelConfig& model = models_[m];
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
  const ModelConfig& model = models_[route.model];
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
