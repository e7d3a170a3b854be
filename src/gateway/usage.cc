#include "gateway/usage.h"

#include <nlohmann/json.hpp>

namespace strata::gateway {
namespace {

using nlohmann::json;

TokenUsage ReadUsage(const json& object) {
  TokenUsage usage;
  auto it = object.find("usage");
  if (it == object.end() || !it->is_object()) return usage;
  auto prompt = it->find("prompt_tokens");
  auto completion = it->find("completion_tokens");
  if (prompt == it->end() || completion == it->end() || !prompt->is_number_integer() ||
      !completion->is_number_integer()) {
    return usage;
  }
  usage.prompt_tokens = prompt->get<int64_t>();
  usage.completion_tokens = completion->get<int64_t>();
  usage.reported = true;
  return usage;
}

bool HasGeneratedText(const json& chunk) {
  auto choices = chunk.find("choices");
  if (choices == chunk.end() || !choices->is_array()) return false;
  for (const json& choice : *choices) {
    if (!choice.is_object()) continue;
    if (auto text = choice.find("text");
        text != choice.end() && text->is_string() && !text->get_ref<const std::string&>().empty()) {
      return true;
    }
    auto delta = choice.find("delta");
    if (delta == choice.end() || !delta->is_object()) continue;
    if (auto content = delta->find("content"); content != delta->end() && content->is_string() &&
                                               !content->get_ref<const std::string&>().empty()) {
      return true;
    }
  }
  return false;
}

}  // namespace

TokenUsage UsageFromBody(std::string_view body) {
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return {};
  return ReadUsage(parsed);
}

void StreamUsageCounter::Feed(std::string_view bytes) {
  pending_.append(bytes);
  size_t start = 0;
  while (true) {
    // Events end with a blank line; engines use "\n\n" (and "\r\n\r\n" is accepted).
    size_t end = pending_.find("\n\n", start);
    size_t crlf = pending_.find("\r\n\r\n", start);
    size_t separator = 2;
    if (crlf != std::string::npos && (end == std::string::npos || crlf < end)) {
      end = crlf;
      separator = 4;
    }
    if (end == std::string::npos) break;
    HandleEvent(std::string_view(pending_).substr(start, end - start));
    start = end + separator;
  }
  pending_.erase(0, start);
}

void StreamUsageCounter::HandleEvent(std::string_view event) {
  size_t line_start = 0;
  while (line_start <= event.size()) {
    size_t line_end = event.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = event.size();
    std::string_view line = event.substr(line_start, line_end - line_start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.starts_with("data:")) {
      std::string_view data = line.substr(5);
      if (!data.empty() && data.front() == ' ') data.remove_prefix(1);
      if (data == "[DONE]") {
        done_ = true;
      } else {
        json chunk = json::parse(data, nullptr, /*allow_exceptions=*/false);
        if (!chunk.is_discarded() && chunk.is_object()) {
          if (HasGeneratedText(chunk)) ++content_chunks_;
          TokenUsage usage = ReadUsage(chunk);
          if (usage.reported) reported_ = usage;
        }
      }
    }
    line_start = line_end + 1;
  }
}

TokenUsage StreamUsageCounter::Usage() const {
  if (reported_.reported) return reported_;
  TokenUsage counted;
  counted.completion_tokens = content_chunks_;
  return counted;
}

}  // namespace strata::gateway
