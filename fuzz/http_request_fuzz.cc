// The gateway's HTTP/1.1 request reader on arbitrary bytes: never crashes; every refusal has a
// status the gateway can answer and a message; a head it reads whole reads the same from its
// own bytes; a chunked body decodes the same whether its bytes arrive at once or in two reads.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "net/http_request_parser.h"

namespace {

constexpr size_t kMaxHead = 1024;
constexpr uint64_t kMaxBody = 4096;

void CheckError(const strata::net::RequestError& error) {
  const int s = error.http_status;
  if (error.message.empty() || !(s == 400 || s == 413 || s == 431 || s == 501 || s == 505)) {
    std::abort();
  }
}

// Decodes `bytes` as a chunked body, given in two reads split at `split`; returns the outcome
// and the body.
std::pair<strata::net::ParseResult, std::string> Decode(std::string_view bytes, size_t split) {
  strata::net::ChunkedBodyDecoder decoder(kMaxBody, kMaxHead);
  strata::net::ParseResult result = decoder.Feed(bytes.substr(0, split), 0);
  if (result && *result == strata::net::ParseProgress::kNeedMore) result = decoder.Feed(bytes, 0);
  if (!result) CheckError(result.error());
  if (result && *result == strata::net::ParseProgress::kDone) {
    if (decoder.consumed() > bytes.size() || decoder.body().size() > kMaxBody) std::abort();
  }
  return {result, decoder.body()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  strata::net::RequestHead head;
  strata::net::ParseResult result = strata::net::ParseRequestHead(bytes, kMaxHead, kMaxBody, &head);
  if (!result) {
    CheckError(result.error());
    return 0;
  }
  if (*result == strata::net::ParseProgress::kNeedMore) {
    if (bytes.size() > kMaxHead) std::abort();
    return 0;
  }
  if (head.size == 0 || head.size > bytes.size() || head.size > kMaxHead) std::abort();
  if (head.content_length && head.chunked) std::abort();
  if (head.content_length && *head.content_length > kMaxBody) std::abort();
  strata::net::RequestHead again;
  strata::net::ParseResult reread =
      strata::net::ParseRequestHead(bytes.substr(0, head.size), kMaxHead, kMaxBody, &again);
  if (!reread || *reread != strata::net::ParseProgress::kDone || again.size != head.size) {
    std::abort();
  }
  if (head.chunked) {
    const std::string_view body = bytes.substr(head.size);
    auto whole = Decode(body, body.size());
    auto split = Decode(body, body.size() / 2);
    if (whole.first.has_value() != split.first.has_value()) std::abort();
    if (whole.first && *whole.first == strata::net::ParseProgress::kDone &&
        (!split.first || *split.first != strata::net::ParseProgress::kDone ||
         whole.second != split.second)) {
      std::abort();
    }
  }
  return 0;
}
