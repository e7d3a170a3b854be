#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata::gateway {

// Tokens a finished (or cut short) request used, for quota settlement and metrics.
struct TokenUsage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  bool reported = false;  // the engine's own `usage` object was seen (otherwise counted)
};

// Reads `usage` from a non-streaming OpenAI response body: its last member, where engines put
// it, else the first member so named. `reported` is false when the body is not a JSON object or
// has no valid usage object; the rest of the body is not validated (see FindLastMember and
// FindMember).
TokenUsage UsageFromBody(std::string_view body);

// Follows an OpenAI server-sent-event stream as it passes through, without buffering more than
// one incomplete event: counts the chunks that carry generated text (engines send one token per
// chunk), remembers the `usage` object when the engine sends one, and notices `data: [DONE]`.
// Owned by one request; not thread-safe.
class StreamUsageCounter {
 public:
  // Feeds the next bytes of the stream, split anywhere.
  void Feed(std::string_view bytes);

  // The usage so far: the engine's report when seen, else the counted chunks (prompt 0).
  TokenUsage Usage() const;
  bool done() const { return done_; }
  // Chunks that carried generated text so far.
  int64_t content_chunks() const { return content_chunks_; }

 private:
  void HandleEvent(std::string_view event);

  std::string pending_;
  int64_t content_chunks_ = 0;
  TokenUsage reported_;
  bool done_ = false;
};

}  // namespace strata::gateway
