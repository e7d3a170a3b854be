#include "net/http_request_parser.h"

#include <algorithm>
#include <string>

namespace strata::net {
namespace {

// Request targets: visible ASCII only.
bool IsTargetChar(unsigned char c) { return c > 0x20 && c < 0x7f; }

tl::unexpected<RequestError> Refuse(int status, size_t offset, std::string_view what) {
  return tl::unexpected(RequestError{
      status,
      "malformed HTTP request at byte " + std::to_string(offset) + ": " + std::string(what)});
}

tl::unexpected<RequestError> RefuseWhole(int status, std::string message) {
  return tl::unexpected(RequestError{status, std::move(message)});
}

// A syntax error as a refusal: malformed bytes name their offset; a limit names the part.
tl::unexpected<RequestError> Refuse(const SyntaxError& error) {
  if (error.http_status == 400) return Refuse(400, error.offset, error.what);
  return RefuseWhole(error.http_status, "request " + error.what);
}

tl::expected<void, RequestError> ParseRequestLine(std::string_view line, size_t offset,
                                                  RequestHead* head) {
  const size_t method_end = line.find(' ');
  const size_t target_end =
      method_end == std::string_view::npos ? method_end : line.find(' ', method_end + 1);
  if (method_end == 0 || target_end == std::string_view::npos || target_end == method_end + 1) {
    return Refuse(400, offset, "the request line is not METHOD SP TARGET SP HTTP-VERSION");
  }
  for (size_t i = 0; i < method_end; ++i) {
    if (!IsTokenChar(static_cast<unsigned char>(line[i]))) {
      return Refuse(400, offset + i, "invalid character in the method");
    }
  }
  for (size_t i = method_end + 1; i < target_end; ++i) {
    if (!IsTargetChar(static_cast<unsigned char>(line[i]))) {
      return Refuse(400, offset + i, "invalid character in the request target");
    }
  }
  const std::string_view version = line.substr(target_end + 1);
  if (version == "HTTP/1.1") {
    head->minor_version = 1;
  } else if (version == "HTTP/1.0") {
    head->minor_version = 0;
  } else if (version.size() == 8 && version.starts_with("HTTP/") && version[5] >= '0' &&
             version[5] <= '9' && version[6] == '.' && version[7] >= '0' && version[7] <= '9') {
    return RefuseWhole(505, "HTTP version " + std::string(version.substr(5)) + " is not supported");
  } else {
    return Refuse(400, offset + target_end + 1, "invalid HTTP version");
  }
  head->method = line.substr(0, method_end);
  head->target = line.substr(method_end + 1, target_end - method_end - 1);
  return {};
}

}  // namespace

ParseResult ParseRequestHead(std::string_view bytes, size_t max_head_bytes, uint64_t max_body_bytes,
                             RequestHead* head) {
  head->fields.clear();
  size_t position = 0;
  // A client may send empty lines between requests (RFC 9112 section 2.2).
  while (bytes.size() - position >= 2 && bytes[position] == '\r' && bytes[position + 1] == '\n') {
    position += 2;
  }
  Framing framing;
  ParseResult read = ReadHeadLines<RequestError>(
      bytes, position, max_head_bytes,
      [](const SyntaxError& error) { return Refuse(error).value(); },
      [head](std::string_view line, size_t offset) { return ParseRequestLine(line, offset, head); },
      &head->fields, &framing, &head->size);
  if (!read || *read == ParseProgress::kNeedMore) return read;
  head->expect_continue = EqualsIgnoreCase(head->Field("expect"), "100-continue");
  head->content_length = framing.content_length;
  head->chunked = framing.chunked;
  if (framing.transfer_encoding) {
    if (head->content_length) {
      return RefuseWhole(400, "malformed HTTP request: both Content-Length and Transfer-Encoding");
    }
    if (head->minor_version == 0) {
      return RefuseWhole(400, "malformed HTTP request: Transfer-Encoding in an HTTP/1.0 request");
    }
    if (!framing.other_coding.empty()) {
      return RefuseWhole(
          501, "transfer coding \"" + std::string(framing.other_coding) + "\" is not supported");
    }
    if (!head->chunked) {
      return RefuseWhole(400, "malformed HTTP request: Transfer-Encoding without chunked");
    }
  }
  if (head->content_length && *head->content_length > max_body_bytes) {
    return RefuseWhole(413,
                       "request body larger than " + std::to_string(max_body_bytes) + " bytes");
  }
  // RFC 9112 section 3.2: an HTTP/1.1 request without exactly one Host field gets a 400.
  const auto hosts = std::count_if(head->fields.begin(), head->fields.end(), [](const auto& field) {
    return EqualsIgnoreCase(field.first, "host");
  });
  if (head->minor_version == 1 && hosts != 1) {
    return RefuseWhole(400, hosts == 0 ? "malformed HTTP request: HTTP/1.1 without a Host field"
                                       : "malformed HTTP request: more than one Host field");
  }
  head->keep_alive = !framing.close && (head->minor_version == 1 || framing.keep_alive);
  head->expect_continue = head->expect_continue && head->minor_version == 1;
  return ParseProgress::kDone;
}

ParseResult ChunkedBodyDecoder::Feed(std::string_view bytes, size_t offset_base) {
  while (!decoder_.done()) {
    auto step = decoder_.Next(bytes.substr(position_), offset_base + position_);
    if (!step) return Refuse(step.error());
    position_ += step->consumed;
    // Refused as soon as a chunk's size line declares too much, before its data arrives.
    if (step->data.size() + decoder_.pending_data() > max_body_bytes_ - body_.size()) {
      return RefuseWhole(413,
                         "request body larger than " + std::to_string(max_body_bytes_) + " bytes");
    }
    body_.append(step->data);
    if (step->consumed == 0) return ParseProgress::kNeedMore;
  }
  return ParseProgress::kDone;
}

}  // namespace strata::net
