#include "gateway/request.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "common/json_reader.h"

namespace strata::gateway {
namespace {

Status FieldError(std::string_view path, std::string_view message) {
  return InvalidArgumentError(fmt::format("{}: {}", path, message));
}

constexpr std::string_view kNonNegativeInteger = "must be a non-negative integer";
constexpr std::string_view kContentShape = "must be a string or a list of text parts";
constexpr std::string_view kPromptShape = "must be a string or a list of strings";

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
  std::optional<int64_t> max_tokens_, max_completion_tokens_;
  bool max_tokens_invalid_ = false, max_completion_tokens_invalid_ = false;
  bool prompt_seen_ = false;
  std::optional<Status> prompt_error_;
};

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
  if (reader_.Peek() != JsonType::kObject) return reader_.Skip();
  reader_.BeginObject();
  std::string_view key;
  std::string scratch;
  while (reader_.NextKey(&key, &scratch)) {
    if (key == "include_usage" && reader_.Peek() == JsonType::kBool) {
      reader_.ReadBool(&out_->include_usage);
    } else {
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
    while (reader_.NextKey(&key, &scratch)) {
      if (key == "text" && reader_.Peek() == JsonType::kString) {
        reader_.ReadString(out);
      } else {
        reader_.Skip();
      }
    }
  }
  return valid;
}

// Role markers keep "user: x" and "system: x" apart in the prefix hash, as chat templates do in
// the engine. The role usually comes first; content that comes before it waits in `early`.
void RequestReader::ReadMessage(size_t index) {
  if (reader_.Peek() != JsonType::kObject) {
    reader_.Skip();
    return SetPromptError(FieldError(fmt::format("messages[{}]", index), "must be an object"));
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
    return SetPromptError(FieldError(fmt::format("messages[{}].role", index), "must be a string"));
  }
  if (!content_valid) {
    return SetPromptError(FieldError(fmt::format("messages[{}].content", index), kContentShape));
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
    return SetPromptError(FieldError("messages", "must be a non-empty list"));
  }
  reader_.BeginArray();
  size_t count = 0;
  while (reader_.NextElement()) ReadMessage(count++);
  if (count == 0) SetPromptError(FieldError("messages", "must be a non-empty list"));
}

void RequestReader::ReadPrompt() {
  const JsonType type = reader_.Peek();
  if (type == JsonType::kString) {
    reader_.ReadString(&out_->prompt_text);
    return;
  }
  if (type != JsonType::kArray) {
    reader_.Skip();
    return SetPromptError(FieldError("prompt", kPromptShape));
  }
  reader_.BeginArray();
  while (reader_.NextElement()) {
    if (reader_.Peek() == JsonType::kString) {
      reader_.ReadString(&out_->prompt_text);
    } else {
      reader_.Skip();
      SetPromptError(FieldError("prompt", kPromptShape));
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
  if (model_ == Field::kMissing) return FieldError("model", "required");
  if (model_ == Field::kInvalid) return FieldError("model", "must be a non-empty string");
  if (stream_invalid_) return FieldError("stream", "must be a boolean");
  if (max_tokens_invalid_) return FieldError("max_tokens", kNonNegativeInteger);
  if (max_completion_tokens_invalid_) {
    return FieldError("max_completion_tokens", kNonNegativeInteger);
  }
  if (!prompt_seen_) {
    return FieldError(kind_ == ApiKind::kChatCompletions ? "messages" : "prompt", "required");
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

ModelRouter::ModelRouter(const std::vector<ModelConfig>& models) : models_(models) {
  using nlohmann::json;
  json data = json::array();
  for (const ModelConfig& model : models_) {
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
