#include "net/http_request_parser.h"

#include <limits>

namespace strata::net {
namespace {

// A chunk-size line (size and extensions) longer than this is refused.
constexpr size_t kMaxChunkLineBytes = 1024;

// RFC 9110 tchar: the characters of methods, field names and transfer codings.
bool IsTokenChar(unsigned char c) {
  constexpr std::string_view kSymbols = "!#$%&'*+-.^_`|~";
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c != 0 && kSymbols.find(static_cast<char>(c)) != std::string_view::npos);
}

// Field values: visible characters, space, tab and obs-text; no other control character.
bool IsFieldValueChar(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

// Request targets: visible ASCII only.
bool IsTargetChar(unsigned char c) { return c > 0x20 && c < 0x7f; }

bool IsOws(char c) { return c == ' ' || c == '\t'; }

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && IsOws(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsOws(s.back())) s.remove_suffix(1);
  return s;
}

tl::unexpected<RequestError> Refuse(int status, size_t offset, std::string_view what) {
  return tl::unexpected(RequestError{
      status,
      "malformed HTTP request at byte " + std::to_string(offset) + ": " + std::string(what)});
}

tl::unexpected<RequestError> RefuseWhole(int status, std::string message) {
  return tl::unexpected(RequestError{status, std::move(message)});
}

// Calls `on_element` with each non-empty element of a comma-separated list, trimmed.
template <typename OnElement>
void ForEachListElement(std::string_view list, OnElement on_element) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view element = TrimOws(list.substr(0, comma));
    if (!element.empty()) on_element(element);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

// Finds the end of the line starting at `from`: the offset of its CR, or npos when the line is
// not complete yet. A bare LF is an error.
tl::expected<size_t, RequestError> FindLineEnd(std::string_view bytes, size_t from,
                                               size_t offset_base) {
  const size_t lf = bytes.find('\n', from);
  if (lf == std::string_view::npos) return std::string_view::npos;
  if (lf == from || bytes[lf - 1] != '\r') {
    return Refuse(400, offset_base + lf, "line ends with a bare LF (CRLF required)");
  }
  return lf - 1;
}

// Validates one "name: value" line starting at `offset`; returns the name and trimmed value.
tl::expected<std::pair<std::string_view, std::string_view>, RequestError> ParseFieldLine(
    std::string_view line, size_t offset) {
  if (IsOws(line.front())) return Refuse(400, offset, "obsolete line folding is not accepted");
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return Refuse(400, offset, "header field has no colon");
  if (colon == 0) return Refuse(400, offset, "header field has an empty name");
  for (size_t i = 0; i < colon; ++i) {
    if (!IsTokenChar(static_cast<unsigned char>(line[i]))) {
      return Refuse(400, offset + i, "invalid character in header field name");
    }
  }
  for (size_t i = colon + 1; i < line.size(); ++i) {
    if (!IsFieldValueChar(static_cast<unsigned char>(line[i]))) {
      return Refuse(400, offset + i, "invalid character in header field value");
    }
  }
  return std::pair{line.substr(0, colon), TrimOws(line.substr(colon + 1))};
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

// What the fields that frame the message said, checked once the head is complete.
struct Framing {
  bool transfer_encoding = false;
  bool other_coding = false;  // a transfer coding other than chunked
  std::string_view other_coding_name;
  bool close = false;
  bool keep_alive = false;
};

tl::expected<void, RequestError> InterpretField(std::string_view name, std::string_view value,
                                                size_t offset, RequestHead* head,
                                                Framing* framing) {
  if (EqualsIgnoreCase(name, "content-length")) {
    if (head->content_length) return Refuse(400, offset, "more than one Content-Length");
    if (value.empty()) return Refuse(400, offset, "empty Content-Length");
    uint64_t length = 0;
    for (char c : value) {
      if (c < '0' || c > '9') return Refuse(400, offset, "Content-Length is not a number");
      if (length > (std::numeric_limits<uint64_t>::max() - 9) / 10) {
        return Refuse(400, offset, "Content-Length is too large");
      }
      length = length * 10 + static_cast<uint64_t>(c - '0');
    }
    head->content_length = length;
  } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
    framing->transfer_encoding = true;
    bool twice = false;
    ForEachListElement(value, [&](std::string_view coding) {
      if (EqualsIgnoreCase(coding, "chunked")) {
        twice = twice || head->chunked;
        head->chunked = true;
      } else if (head->chunked) {
        twice = true;  // a coding after chunked: chunked is not the final one
      } else if (!framing->other_coding) {
        framing->other_coding = true;
        framing->other_coding_name = coding;
      }
    });
    if (twice) return Refuse(400, offset, "chunked must be the final transfer coding, once");
  } else if (EqualsIgnoreCase(name, "connection")) {
    ForEachListElement(value, [&](std::string_view option) {
      if (EqualsIgnoreCase(option, "close")) framing->close = true;
      if (EqualsIgnoreCase(option, "keep-alive")) framing->keep_alive = true;
    });
  } else if (EqualsIgnoreCase(name, "expect")) {
    head->expect_continue = EqualsIgnoreCase(value, "100-continue");
  }
  return {};
}

}  // namespace

std::string_view RequestHead::Field(std::string_view name) const {
  for (const auto& [field_name, value] : fields) {
    if (EqualsIgnoreCase(field_name, name)) return value;
  }
  return {};
}

ParseResult ParseRequestHead(std::string_view bytes, size_t max_head_bytes, uint64_t max_body_bytes,
                             RequestHead* head) {
  head->fields.clear();
  head->content_length.reset();
  head->chunked = false;
  head->expect_continue = false;
  size_t position = 0;
  // A client may send empty lines between requests (RFC 9112 section 2.2).
  while (bytes.size() - position >= 2 && bytes[position] == '\r' && bytes[position + 1] == '\n') {
    position += 2;
  }
  Framing framing;
  bool request_line = true;
  while (true) {
    auto line_end = FindLineEnd(bytes, position, 0);
    if (!line_end) return tl::unexpected(std::move(line_end.error()));
    // The empty lines skipped count too: they are bytes the client made the gateway hold.
    const size_t head_bytes = *line_end == std::string_view::npos ? bytes.size() : *line_end + 2;
    if (head_bytes > max_head_bytes) {
      return RefuseWhole(431,
                         "request header larger than " + std::to_string(max_head_bytes) + " bytes");
    }
    if (*line_end == std::string_view::npos) return ParseProgress::kNeedMore;
    const std::string_view line = bytes.substr(position, *line_end - position);
    if (request_line) {
      if (auto parsed = ParseRequestLine(line, position, head); !parsed) {
        return tl::unexpected(std::move(parsed.error()));
      }
      request_line = false;
    } else if (line.empty()) {
      head->size = *line_end + 2;
      break;
    } else {
      auto field = ParseFieldLine(line, position);
      if (!field) return tl::unexpected(std::move(field.error()));
      if (auto used = InterpretField(field->first, field->second, position, head, &framing);
          !used) {
        return tl::unexpected(std::move(used.error()));
      }
      head->fields.push_back(*field);
    }
    position = *line_end + 2;
  }
  if (framing.transfer_encoding) {
    if (head->content_length) {
      return RefuseWhole(400, "malformed HTTP request: both Content-Length and Transfer-Encoding");
    }
    if (head->minor_version == 0) {
      return RefuseWhole(400, "malformed HTTP request: Transfer-Encoding in an HTTP/1.0 request");
    }
    if (framing.other_coding) {
      return RefuseWhole(501, "transfer coding \"" + std::string(framing.other_coding_name) +
                                  "\" is not supported");
    }
    if (!head->chunked) {
      return RefuseWhole(400, "malformed HTTP request: Transfer-Encoding without chunked");
    }
  }
  if (head->content_length && *head->content_length > max_body_bytes) {
    return RefuseWhole(413,
                       "request body larger than " + std::to_string(max_body_bytes) + " bytes");
  }
  head->keep_alive = !framing.close && (head->minor_version == 1 || framing.keep_alive);
  head->expect_continue = head->expect_continue && head->minor_version == 1;
  return ParseProgress::kDone;
}

ParseResult ChunkedBodyDecoder::Feed(std::string_view bytes, size_t offset_base) {
  while (!done_) {
    auto line_end = FindLineEnd(bytes, position_, offset_base);
    if (!line_end) return tl::unexpected(std::move(line_end.error()));
    if (in_trailer_) {
      const size_t trailer_bytes =
          (*line_end == std::string_view::npos ? bytes.size() : *line_end + 2) - trailer_start_;
      if (trailer_bytes > max_trailer_bytes_) {
        return RefuseWhole(
            431, "request trailer larger than " + std::to_string(max_trailer_bytes_) + " bytes");
      }
      if (*line_end == std::string_view::npos) return ParseProgress::kNeedMore;
      const std::string_view line = bytes.substr(position_, *line_end - position_);
      if (!line.empty()) {
        if (auto field = ParseFieldLine(line, offset_base + position_); !field) {
          return tl::unexpected(std::move(field.error()));
        }
      }
      position_ = *line_end + 2;
      done_ = line.empty();
      continue;
    }
    if (*line_end == std::string_view::npos) {
      if (bytes.size() - position_ > kMaxChunkLineBytes) {
        return Refuse(400, offset_base + position_, "chunk size line too long");
      }
      return ParseProgress::kNeedMore;
    }
    const std::string_view line = bytes.substr(position_, *line_end - position_);
    uint64_t size = 0;
    size_t digits = 0;
    for (; digits < line.size(); ++digits) {
      const char c = Lower(line[digits]);
      const int value = c >= '0' && c <= '9' ? c - '0' : (c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1);
      if (value < 0) break;
      if (size > (std::numeric_limits<uint64_t>::max() >> 4)) {
        return Refuse(400, offset_base + position_, "chunk size is too large");
      }
      size = size * 16 + static_cast<uint64_t>(value);
    }
    if (digits == 0) return Refuse(400, offset_base + position_, "chunk size is not hexadecimal");
    std::string_view extension = line.substr(digits);
    while (!extension.empty() && IsOws(extension.front())) extension.remove_prefix(1);
    if (!extension.empty() && extension.front() != ';') {
      return Refuse(400, offset_base + position_ + digits, "invalid character after chunk size");
    }
    for (size_t i = 0; i < extension.size(); ++i) {
      if (!IsFieldValueChar(static_cast<unsigned char>(extension[i]))) {
        return Refuse(400, offset_base + position_ + line.size() - extension.size() + i,
                      "invalid character in chunk extension");
      }
    }
    const size_t data_start = *line_end + 2;
    if (size == 0) {
      in_trailer_ = true;
      position_ = data_start;
      trailer_start_ = data_start;
      continue;
    }
    if (size > max_body_bytes_ - body_.size()) {
      return RefuseWhole(413,
                         "request body larger than " + std::to_string(max_body_bytes_) + " bytes");
    }
    if (bytes.size() - data_start < size + 2) return ParseProgress::kNeedMore;
    if (bytes[data_start + size] != '\r' || bytes[data_start + size + 1] != '\n') {
      return Refuse(400, offset_base + data_start + size, "chunk data not followed by CRLF");
    }
    body_.append(bytes.substr(data_start, size));
    position_ = data_start + size + 2;
  }
  return ParseProgress::kDone;
}

}  // namespace strata::net
