#include "gateway/usage.h"

#include <array>
#include <optional>

#include "common/json_reader.h"

namespace strata::gateway {
namespace {

// What accounting reads from one response object or stream chunk.
struct ResponseFacts {
  bool generated_text = false;  // a choice carries non-empty text or delta content
  TokenUsage usage;
};

// Reads {"prompt_tokens": N, "completion_tokens": M, ...}; `reported` only when both are
// integers. REQUIRES: reader.Peek() == kObject.
TokenUsage ReadUsage(JsonReader& reader) {
  TokenUsage usage;
  bool has_prompt = false, has_completion = false;
  reader.BeginObject();
  std::string_view key;
  std::string scratch;
  while (reader.NextKey(&key, &scratch)) {
    const bool prompt = key == "prompt_tokens";
    if ((prompt || key == "completion_tokens") && reader.Peek() == JsonType::kNumber) {
      int64_t* target = prompt ? &usage.prompt_tokens : &usage.completion_tokens;
      (prompt ? has_prompt : has_completion) = reader.ReadInteger(target);
    } else {
      reader.Skip();
    }
  }
  usage.reported = has_prompt && has_completion;
  if (!usage.reported) usage = TokenUsage{};
  return usage;
}

// Reads `text` when it is a JSON integer that fits int64_t.
bool ReadCount(const std::optional<std::string_view>& text, int64_t* count) {
  if (!text) return false;
  JsonReader reader(*text);
  return reader.ReadInteger(count) && reader.Finish().ok();
}

// Whether a non-empty string follows (consumed either way).
bool ReadNonEmptyString(JsonReader& reader) {
  bool empty = true;
  if (reader.Peek() != JsonType::kString || !reader.ReadStringEmptiness(&empty)) {
    reader.Skip();
    return false;
  }
  return !empty;
}

// One element of "choices": {"text": "..."} (completions) or {"delta": {"content": "..."}}.
bool ReadChoiceHasText(JsonReader& reader) {
  if (reader.Peek() != JsonType::kObject) {
    reader.Skip();
    return false;
  }
  bool has_text = false;
  reader.BeginObject();
  std::string_view key;
  std::string scratch;
  while (reader.NextKey(&key, &scratch)) {
    if (key == "text") {
      has_text = ReadNonEmptyString(reader) || has_text;
    } else if (key == "delta" && reader.Peek() == JsonType::kObject) {
      reader.BeginObject();
      std::string_view inner;
      std::string inner_scratch;
      while (reader.NextKey(&inner, &inner_scratch)) {
        if (inner == "content") {
          has_text = ReadNonEmptyString(reader) || has_text;
        } else {
          reader.Skip();
        }
      }
    } else {
      reader.Skip();
    }
  }
  return has_text;
}

// The facts of one JSON object (a stream's chunk), or nullopt when `text` is not a valid JSON
// object.
std::optional<ResponseFacts> ReadFacts(std::string_view text) {
  JsonReader reader(text);
  if (reader.Peek() != JsonType::kObject) return std::nullopt;
  ResponseFacts facts;
  reader.BeginObject();
  std::string_view key;
  std::string scratch;
  while (reader.NextKey(&key, &scratch)) {
    if (key == "usage" && reader.Peek() == JsonType::kObject) {
      facts.usage = ReadUsage(reader);
    } else if (key == "usage") {
      reader.Skip();
      facts.usage = TokenUsage{};
    } else if (key == "choices" && reader.Peek() == JsonType::kArray) {
      reader.BeginArray();
      while (reader.NextElement())
        facts.generated_text = ReadChoiceHasText(reader) || facts.generated_text;
    } else {
      reader.Skip();
    }
  }
  if (!reader.Finish().ok()) return std::nullopt;
  return facts;
}

}  // namespace

TokenUsage UsageFromBody(std::string_view body) {
  // The answer is relayed as it is: only the two counts are read from it. Engines put `usage`
  // last; others get the scan from the start.
  std::optional<std::string_view> usage_text = FindLastMember(body, "usage");
  if (!usage_text) usage_text = FindMember(body, "usage");
  if (!usage_text) return TokenUsage{};
  static constexpr std::array<std::string_view, 2> kCounts = {"prompt_tokens", "completion_tokens"};
  std::array<std::optional<std::string_view>, 2> counts;
  FindMembers(*usage_text, kCounts, counts);
  TokenUsage usage;
  usage.reported =
      ReadCount(counts[0], &usage.prompt_tokens) && ReadCount(counts[1], &usage.completion_tokens);
  return usage.reported ? usage : TokenUsage{};
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
        if (std::optional<ResponseFacts> facts = ReadFacts(data)) {
          if (facts->generated_text) ++content_chunks_;
          if (facts->usage.reported) reported_ = facts->usage;
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
