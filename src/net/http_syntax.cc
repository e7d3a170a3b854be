#include "net/http_syntax.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

namespace strata::net {
namespace {

// A chunk-size line (size and extensions) longer than this is refused.
constexpr size_t kMaxChunkLineBytes = 1024;

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// The index of the first byte of `value` that IsFieldValueChar refuses, or npos. Eight bytes
// at a time while eight remain: a word with no byte below 0x20 (found by the borrow its
// subtraction leaves in the high bit) and none equal to 0x7F (a zero byte of the word xor 0x7F)
// is all valid; any other word is checked byte by byte (a tab is valid, and below 0x20).
size_t FindInvalidFieldValueByte(std::string_view value) {
  constexpr uint64_t kOnes = 0x0101010101010101, kHighs = 0x8080808080808080;
  size_t i = 0;
  for (; i + 8 <= value.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, value.data() + i, sizeof word);
    const uint64_t del = word ^ (kOnes * 0x7F);
    const uint64_t suspect = (((word - kOnes * 0x20) & ~word) | ((del - kOnes) & ~del)) & kHighs;
    if (suspect == 0) continue;
    for (size_t j = i; j < i + 8; ++j) {
      if (!IsFieldValueChar(static_cast<unsigned char>(value[j]))) return j;
    }
  }
  for (; i < value.size(); ++i) {
    if (!IsFieldValueChar(static_cast<unsigned char>(value[i]))) return i;
  }
  return std::string_view::npos;
}

tl::unexpected<SyntaxError> Malformed(size_t offset, std::string what) {
  return tl::unexpected(SyntaxError{400, offset, std::move(what)});
}

}  // namespace

bool IsTokenChar(unsigned char c) {
  // A table: every byte of every field name is checked.
  static constexpr std::array<bool, 256> kTokenChars = [] {
    std::array<bool, 256> table{};
    for (int c = '0'; c <= '9'; ++c) table[c] = true;
    for (int c = 'a'; c <= 'z'; ++c) table[c] = true;
    for (int c = 'A'; c <= 'Z'; ++c) table[c] = true;
    for (char c : std::string_view("!#$%&'*+-.^_`|~")) table[static_cast<unsigned char>(c)] = true;
    return table;
  }();
  return kTokenChars[c];
}

bool IsFieldValueChar(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

bool EqualsIgnoreCaseSameLength(const char* a, const char* b, size_t length) {
  for (size_t i = 0; i < length; ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && IsOws(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsOws(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view FindField(const FieldList& fields, std::string_view name) {
  for (const auto& [field_name, value] : fields) {
    if (EqualsIgnoreCase(field_name, name)) return value;
  }
  return {};
}

tl::expected<size_t, SyntaxError> FindLineEnd(std::string_view bytes, size_t from,
                                              size_t offset_base) {
  const size_t lf = bytes.find('\n', from);
  if (lf == std::string_view::npos) return std::string_view::npos;
  if (lf == from || bytes[lf - 1] != '\r') {
    return Malformed(offset_base + lf, "line ends with a bare LF (CRLF required)");
  }
  return lf - 1;
}

tl::expected<std::pair<std::string_view, std::string_view>, SyntaxError> ParseFieldLine(
    std::string_view line, size_t offset) {
  if (IsOws(line.front())) return Malformed(offset, "obsolete line folding is not accepted");
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return Malformed(offset, "header field has no colon");
  if (colon == 0) return Malformed(offset, "header field has an empty name");
  for (size_t i = 0; i < colon; ++i) {
    if (!IsTokenChar(static_cast<unsigned char>(line[i]))) {
      return Malformed(offset + i, "invalid character in header field name");
    }
  }
  const std::string_view value = line.substr(colon + 1);
  if (const size_t bad = FindInvalidFieldValueByte(value); bad != std::string_view::npos) {
    return Malformed(offset + colon + 1 + bad, "invalid character in header field value");
  }
  return std::pair{line.substr(0, colon), TrimOws(value)};
}

tl::expected<uint64_t, SyntaxError> ParseContentLength(std::string_view value, size_t offset) {
  if (value.empty()) return Malformed(offset, "empty Content-Length");
  uint64_t length = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return Malformed(offset, "Content-Length is not a number");
    if (length > (std::numeric_limits<uint64_t>::max() - 9) / 10) {
      return Malformed(offset, "Content-Length is too large");
    }
    length = length * 10 + static_cast<uint64_t>(c - '0');
  }
  return length;
}

tl::expected<void, SyntaxError> ReadFramingField(std::string_view name, std::string_view value,
                                                 size_t offset, Framing* framing) {
  if (EqualsIgnoreCase(name, "content-length")) {
    if (framing->content_length) return Malformed(offset, "more than one Content-Length");
    auto length = ParseContentLength(value, offset);
    if (!length) return tl::unexpected(std::move(length.error()));
    framing->content_length = *length;
  } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
    framing->transfer_encoding = true;
    bool twice = false;
    ForEachListElement(value, [&](std::string_view coding) {
      if (EqualsIgnoreCase(coding, "chunked")) {
        twice = twice || framing->chunked;
        framing->chunked = true;
      } else if (framing->chunked) {
        twice = true;  // a coding after chunked: chunked is not the final one
      } else if (framing->other_coding.empty()) {
        framing->other_coding = coding;
      }
    });
    if (twice) return Malformed(offset, "chunked must be the final transfer coding, once");
  } else if (EqualsIgnoreCase(name, "connection")) {
    ForEachListElement(value, [&](std::string_view option) {
      if (EqualsIgnoreCase(option, "close")) framing->close = true;
      if (EqualsIgnoreCase(option, "keep-alive")) framing->keep_alive = true;
    });
  }
  return {};
}

tl::expected<ChunkedDecoder::Step, SyntaxError> ChunkedDecoder::Next(std::string_view input,
                                                                     size_t offset) {
  Step step;
  while (state_ != State::kDone) {
    const std::string_view rest = input.substr(step.consumed);
    const size_t at = offset + step.consumed;
    if (state_ == State::kData) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(rest.size(), remaining_));
      step.data = rest.substr(0, n);
      step.consumed += n;
      remaining_ -= n;
      if (remaining_ == 0) state_ = State::kDataEnd;
      return step;  // one piece of data per step
    }
    if (state_ == State::kDataEnd) {
      if (rest.size() < 2) return step;
      if (rest[0] != '\r' || rest[1] != '\n')
        return Malformed(at, "chunk data not followed by CRLF");
      step.consumed += 2;
      state_ = State::kSizeLine;
      continue;
    }
    auto line_end = FindLineEnd(rest, 0, at);
    if (!line_end) return tl::unexpected(std::move(line_end.error()));
    if (state_ == State::kTrailer) {
      const size_t line_bytes = *line_end == std::string_view::npos ? rest.size() : *line_end + 2;
      if (trailer_bytes_ + line_bytes > max_trailer_bytes_) {
        return tl::unexpected(SyntaxError{
            431, at, "trailer larger than " + std::to_string(max_trailer_bytes_) + " bytes"});
      }
      if (*line_end == std::string_view::npos) return step;
      const std::string_view line = rest.substr(0, *line_end);
      if (!line.empty()) {
        if (auto field = ParseFieldLine(line, at); !field) {
          return tl::unexpected(std::move(field.error()));
        }
      }
      trailer_bytes_ += line_bytes;
      step.consumed += line_bytes;
      if (line.empty()) state_ = State::kDone;
      continue;
    }
    // kSizeLine: hexadecimal size, then optional extensions.
    // The same limit whether the line's end has arrived or not: a CR that has arrived without
    // its LF may be the line's end, not part of it.
    const size_t line_bytes = *line_end != std::string_view::npos ? *line_end
                              : rest.ends_with('\r')              ? rest.size() - 1
                                                                  : rest.size();
    if (line_bytes > kMaxChunkLineBytes) return Malformed(at, "chunk size line too long");
    if (*line_end == std::string_view::npos) return step;
    const std::string_view line = rest.substr(0, *line_end);
    uint64_t size = 0;
    size_t digits = 0;
    for (; digits < line.size(); ++digits) {
      const char c = Lower(line[digits]);
      const int value = c >= '0' && c <= '9' ? c - '0' : (c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1);
      if (value < 0) break;
      if (size > (std::numeric_limits<uint64_t>::max() >> 4)) {
        return Malformed(at, "chunk size is too large");
      }
      size = size * 16 + static_cast<uint64_t>(value);
    }
    if (digits == 0) return Malformed(at, "chunk size is not hexadecimal");
    std::string_view extension = line.substr(digits);
    while (!extension.empty() && IsOws(extension.front())) extension.remove_prefix(1);
    if (!extension.empty() && extension.front() != ';') {
      return Malformed(at + digits, "invalid character after chunk size");
    }
    for (size_t i = 0; i < extension.size(); ++i) {
      if (!IsFieldValueChar(static_cast<unsigned char>(extension[i]))) {
        return Malformed(at + line.size() - extension.size() + i,
                         "invalid character in chunk extension");
      }
    }
    step.consumed += *line_end + 2;
    remaining_ = size;
    state_ = size == 0 ? State::kTrailer : State::kData;
  }
  return step;
}

}  // namespace strata::net
