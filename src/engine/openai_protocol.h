#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

// The OpenAI completions and chat-completions wire format, as vLLM speaks it: request parsing
// with errors that name the field, and the JSON of responses, stream chunks and errors.

namespace strata::engine {

struct CompletionRequest {
  bool chat = false;
  std::string model;
  // The prompt, or for chat the messages rendered in order ("<|role|>\ncontent\n" each, then
  // "<|assistant|>\n"), so that a shared conversation head is a shared token prefix.
  std::string prompt_text;
  int max_tokens = 16;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
};

// Default max_tokens: 16 for completions (OpenAI's default), 256 for chat.
inline constexpr int kDefaultCompletionMaxTokens = 16;
inline constexpr int kDefaultChatMaxTokens = 256;

// Parses the JSON body of POST /v1/completions (chat == false) or /v1/chat/completions.
// InvalidArgument naming the field ("max_tokens: must be an integer >= 1") for anything it
// cannot serve: not JSON, missing model, prompt not a string (or a list of exactly one string),
// messages not a non-empty list of {role, content} with string content, n != 1, best_of, ...
Result<CompletionRequest> ParseCompletionRequest(std::string_view body, bool chat);

// Identifies one response: every chunk of a stream carries the same.
struct CompletionIdentity {
  std::string id;  // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;
  std::string model;
  bool chat = false;
  bool include_usage = false;  // stream chunks then carry "usage": null
};

// A stream chunk's JSON (without the "data: " framing) carrying `text`; with `finish_reason`
// non-empty, the chunk also ends the choice.
std::string StreamChunk(const CompletionIdentity& identity, std::string_view text,
                        std::string_view finish_reason);
// The first chunk of a chat stream: delta {"role": "assistant", "content": ""}.
std::string ChatRoleChunk(const CompletionIdentity& identity);
// The final usage chunk of a stream with include_usage: no choices, the usage object.
std::string UsageChunk(const CompletionIdentity& identity, int prompt_tokens,
                       int completion_tokens);
// The whole non-streaming response.
std::string FullResponse(const CompletionIdentity& identity, std::string_view text,
                         std::string_view finish_reason, int prompt_tokens, int completion_tokens);

// OpenAI's error body: {"error": {"message", "type", "param", "code"}}. `param` empty: null.
std::string ErrorBody(std::string_view message, std::string_view type, std::string_view param,
                      int code);
// The field an InvalidArgument message from ParseCompletionRequest names (text before ": "),
// for the error's "param".
std::string ParamOf(std::string_view message);

}  // namespace strata::engine
