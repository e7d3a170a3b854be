#include "net/http_response_parser.h"

#include <algorithm>

namespace strata::net {
namespace {

tl::unexpected<ResponseError> Reject(size_t offset, std::string_view what) {
  return tl::unexpected(ResponseError{"malformed HTTP response at byte " + std::to_string(offset) +
                                      ": " + std::string(what)});
}

tl::unexpected<ResponseError> Reject(const SyntaxError& error) {
  if (error.http_status == 400) return Reject(error.offset, error.what);
  return tl::unexpected(ResponseError{"response " + error.what});
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// "HTTP/1.x SP 3DIGIT [SP reason-phrase]".
tl::expected<void, ResponseError> ParseStatusLine(std::string_view line, ResponseHead* head) {
  if (line.size() < 12 || !line.starts_with("HTTP/1.") || (line[7] != '0' && line[7] != '1') ||
      line[8] != ' ') {
    return Reject(0, "the status line does not start with HTTP/1.0 or HTTP/1.1 and a space");
  }
  if (!IsDigit(line[9]) || !IsDigit(line[10]) || !IsDigit(line[11]) || line[9] == '0') {
    return Reject(9, "the status code is not three digits");
  }
  if (line.size() > 12 && line[12] != ' ') return Reject(12, "no space after the status code");
  const std::string_view reason = line.size() > 13 ? line.substr(13) : std::string_view();
  for (size_t i = 0; i < reason.size(); ++i) {
    if (!IsFieldValueChar(static_cast<unsigned char>(reason[i]))) {
      return Reject(13 + i, "invalid character in the reason phrase");
    }
  }
  head->minor_version = line[7] - '0';
  head->status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
  head->reason = reason;
  return {};
}

}  // namespace

ResponseParseResult ParseResponseHead(std::string_view bytes, size_t max_head_bytes,
                                      ResponseHead* head) {
  head->fields.clear();
  Framing framing;
  ResponseParseResult read = ReadHeadLines<ResponseError>(
      bytes, 0, max_head_bytes, [](const SyntaxError& error) { return Reject(error).value(); },
      [head](std::string_view line, size_t) { return ParseStatusLine(line, head); }, &head->fields,
      &framing, &head->size);
  if (!read || *read == ParseProgress::kNeedMore) return read;
  if (framing.transfer_encoding && framing.content_length) {
    return tl::unexpected(
        ResponseError{"malformed HTTP response: both Content-Length and Transfer-Encoding"});
  }
  head->content_length = framing.content_length;
  head->keep_alive = !framing.close && (head->minor_version == 1 || framing.keep_alive);
  if (head->interim() || head->status == 204 || head->status == 304) {
    head->framing = BodyFraming::kNone;
  } else if (framing.transfer_encoding) {
    // A final coding other than chunked can only end with the connection.
    head->framing = framing.chunked ? BodyFraming::kChunked : BodyFraming::kUntilClose;
  } else if (framing.content_length) {
    head->framing = BodyFraming::kLength;
  } else {
    head->framing = BodyFraming::kUntilClose;
  }
  if (head->framing == BodyFraming::kUntilClose) head->keep_alive = false;
  return ParseProgress::kDone;
}

ResponseBodyReader::ResponseBodyReader(const ResponseHead& head, size_t max_trailer_bytes)
    : framing_(head.framing),
      remaining_(head.content_length.value_or(0)),
      chunked_(max_trailer_bytes) {}

tl::expected<ChunkedDecoder::Step, ResponseError> ResponseBodyReader::Next(std::string_view input,
                                                                           size_t offset) {
  ChunkedDecoder::Step step;
  switch (framing_) {
    case BodyFraming::kNone:
      break;
    case BodyFraming::kLength: {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(input.size(), remaining_));
      step.data = input.substr(0, n);
      step.consumed = n;
      remaining_ -= n;
      break;
    }
    case BodyFraming::kChunked: {
      auto chunk = chunked_.Next(input, offset);
      if (!chunk) return Reject(chunk.error());
      step = *chunk;
      break;
    }
    case BodyFraming::kUntilClose:
      step.data = input;
      step.consumed = input.size();
      break;
  }
  return step;
}

bool ResponseBodyReader::EndOfInput() {
  closed_ = true;
  return framing_ == BodyFraming::kUntilClose;
}

bool ResponseBodyReader::done() const {
  switch (framing_) {
    case BodyFraming::kNone:
      return true;
    case BodyFraming::kLength:
      return remaining_ == 0;
    case BodyFraming::kChunked:
      return chunked_.done();
    case BodyFraming::kUntilClose:
      return closed_;
  }
  return true;
}

}  // namespace strata::net
