// The gateway's HTTP/1.1 response reader on arbitrary bytes: never crashes; every rejection has
// a message; a head it reads whole reads the same from its own bytes; a body decodes to the
// same bytes whether they arrive at once or one byte at a time, and never to more than was given.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "net/http_response_parser.h"

namespace {

constexpr size_t kMaxHead = 1024;

// Reads the body in `bytes`, handed over in pieces of at most `piece` bytes; returns whether it
// ended (done, or cut by an error: then nullopt) and the decoded bytes.
std::pair<std::optional<bool>, std::string> ReadBody(const strata::net::ResponseHead& head,
                                                     std::string_view bytes, size_t piece) {
  strata::net::ResponseBodyReader reader(head, kMaxHead);
  std::string body;
  size_t given = 0;     // bytes handed to the reader so far
  size_t consumed = 0;  // of which it used
  while (!reader.done()) {
    auto step = reader.Next(bytes.substr(consumed, given - consumed), consumed);
    if (!step) {
      if (step.error().message.empty()) std::abort();
      return {std::nullopt, body};
    }
    if (step->consumed > given - consumed || step->data.size() > step->consumed) std::abort();
    consumed += step->consumed;
    body.append(step->data);
    if (step->consumed == 0 && !reader.done()) {
      if (given == bytes.size()) return {reader.EndOfInput(), body};
      given = std::min(bytes.size(), given + piece);
    }
  }
  return {true, body};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  strata::net::ResponseHead head;
  strata::net::ResponseParseResult result = strata::net::ParseResponseHead(bytes, kMaxHead, &head);
  if (!result) {
    if (result.error().message.empty()) std::abort();
    return 0;
  }
  if (*result == strata::net::ParseProgress::kNeedMore) {
    if (bytes.size() > kMaxHead) std::abort();
    return 0;
  }
  if (head.size == 0 || head.size > bytes.size() || head.status < 100 || head.status > 999) {
    std::abort();
  }
  strata::net::ResponseHead again;
  strata::net::ResponseParseResult reread =
      strata::net::ParseResponseHead(bytes.substr(0, head.size), kMaxHead, &again);
  if (!reread || *reread != strata::net::ParseProgress::kDone || again.size != head.size ||
      again.framing != head.framing) {
    std::abort();
  }
  const std::string_view body = bytes.substr(head.size);
  auto whole = ReadBody(head, body, body.size() + 1);
  auto trickled = ReadBody(head, body, 1);
  if (whole.first.has_value() != trickled.first.has_value()) std::abort();
  if (whole.first && (*whole.first != *trickled.first || whole.second != trickled.second)) {
    std::abort();
  }
  if (whole.second.size() > body.size()) std::abort();
  return 0;
}
