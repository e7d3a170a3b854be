#pragma once

// The pieces of HTTP/1.1 message syntax (RFC 9110, RFC 9112) that the in-place request and
// response readers share: character classes, lines, field lines, list elements and chunked
// framing. Boost-free; nothing here allocates except an error's message.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <utility>
#include <vector>

namespace strata::net {

// How far reading a message's head (or body) got.
enum class ParseProgress { kNeedMore, kDone };

// Where and why bytes are not valid HTTP/1.1, with the status a server answers them with.
struct SyntaxError {
  int http_status = 400;  // 400 malformed; 413 and 431 for limits
  size_t offset = 0;      // from the start of the message
  std::string what;
};

// RFC 9110 tchar: the characters of methods, field names and transfer codings.
bool IsTokenChar(unsigned char c);
// Field values: visible characters, space, tab and obs-text; no other control character.
bool IsFieldValueChar(unsigned char c);
inline bool IsOws(char c) { return c == ' ' || c == '\t'; }
// ASCII case-insensitive equality. Inline: field names are compared with many names, and most
// differ in length.
bool EqualsIgnoreCaseSameLength(const char* a, const char* b, size_t length);
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && EqualsIgnoreCaseSameLength(a.data(), b.data(), a.size());
}
std::string_view TrimOws(std::string_view s);

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

// Header fields in arrival order, as views into a message's bytes.
using FieldList = std::vector<std::pair<std::string_view, std::string_view>>;

// The value of the first field called `name` (case-insensitive), or empty when none.
std::string_view FindField(const FieldList& fields, std::string_view name);

// Finds the end of the line of `bytes` starting at `from`: the offset of its CR, or npos when
// the line is not complete yet. A bare LF is an error (at offset_base + its position).
tl::expected<size_t, SyntaxError> FindLineEnd(std::string_view bytes, size_t from,
                                              size_t offset_base);

// Validates one "name: value" line that starts at `offset` in its message; returns the name and
// the value without surrounding whitespace. No obs-fold.
tl::expected<std::pair<std::string_view, std::string_view>, SyntaxError> ParseFieldLine(
    std::string_view line, size_t offset);

// A Content-Length value: decimal digits only, no overflow.
tl::expected<uint64_t, SyntaxError> ParseContentLength(std::string_view value, size_t offset);

// What the fields that frame a message said: Content-Length, Transfer-Encoding, Connection.
struct Framing {
  std::optional<uint64_t> content_length;
  bool transfer_encoding = false;  // the message has the field
  bool chunked = false;            // its final coding is chunked
  std::string_view other_coding;   // the first coding other than chunked, if any
  bool close = false;              // Connection: close
  bool keep_alive = false;         // Connection: keep-alive
};

// Adds the field `name: value` (starting at `offset`) to `framing` when it is one of those.
// Errors: a second or invalid Content-Length, chunked not the final coding or named twice.
tl::expected<void, SyntaxError> ReadFramingField(std::string_view name, std::string_view value,
                                                 size_t offset, Framing* framing);

// Reads the lines of a message head starting at `position` of `bytes`: the start line, given to
// `start_line(line, offset)` (which returns tl::expected<void, Error>), then field lines up to
// the empty line, each checked, read into `framing` and appended to `fields`. Returns kNeedMore
// while the head is incomplete and within `max_head_bytes`, kDone with `*head_size` set, or an
// error; syntax errors (431 for a head over the limit, naming "header") pass through `to_error`.
template <typename Error, typename ToError, typename StartLine>
tl::expected<ParseProgress, Error> ReadHeadLines(std::string_view bytes, size_t position,
                                                 size_t max_head_bytes, ToError to_error,
                                                 StartLine start_line, FieldList* fields,
                                                 Framing* framing, size_t* head_size) {
  bool first = true;
  while (true) {
    auto line_end = FindLineEnd(bytes, position, 0);
    if (!line_end) return tl::unexpected(to_error(line_end.error()));
    // Bytes before `position` count too: the caller made the reader hold them.
    const size_t head_bytes = *line_end == std::string_view::npos ? bytes.size() : *line_end + 2;
    if (head_bytes > max_head_bytes) {
      return tl::unexpected(to_error(SyntaxError{
          431, position, "header larger than " + std::to_string(max_head_bytes) + " bytes"}));
    }
    if (*line_end == std::string_view::npos) return ParseProgress::kNeedMore;
    const std::string_view line = bytes.substr(position, *line_end - position);
    if (first) {
      if (auto started = start_line(line, position); !started) {
        return tl::unexpected(std::move(started.error()));
      }
      first = false;
    } else if (line.empty()) {
      *head_size = *line_end + 2;
      return ParseProgress::kDone;
    } else {
      auto field = ParseFieldLine(line, position);
      if (!field) return tl::unexpected(to_error(field.error()));
      if (auto read = ReadFramingField(field->first, field->second, position, framing); !read) {
        return tl::unexpected(to_error(read.error()));
      }
      fields->push_back(*field);
    }
    position = *line_end + 2;
  }
}

// Decodes a chunked body (RFC 9112 section 7.1) as its bytes arrive, without copying: each Step
// returns data that is a view into the bytes given. Extensions are checked and ignored; trailer
// fields are checked and dropped. Not thread-safe.
class ChunkedDecoder {
 public:
  // `max_trailer_bytes` bounds the trailer section (431 beyond it).
  explicit ChunkedDecoder(size_t max_trailer_bytes) : max_trailer_bytes_(max_trailer_bytes) {}

  struct Step {
    size_t consumed = 0;    // bytes of the input this step used
    std::string_view data;  // body bytes decoded (a view into the input); may be empty
  };
  // `input`: the bytes not consumed yet, `offset`: where they start in the message (for
  // errors). Decodes as far as it can up to the end of one chunk's data. A step that consumes
  // nothing and is not done needs more bytes. Errors: malformed framing (400), a trailer over
  // its limit (431).
  tl::expected<Step, SyntaxError> Next(std::string_view input, size_t offset);

  // The last chunk and the trailer's end have been read.
  bool done() const { return state_ == State::kDone; }
  // Bytes of the current chunk's data that its size line declared and Next has not returned.
  uint64_t pending_data() const { return state_ == State::kData ? remaining_ : 0; }

 private:
  enum class State { kSizeLine, kData, kDataEnd, kTrailer, kDone };
  size_t max_trailer_bytes_;
  State state_ = State::kSizeLine;
  uint64_t remaining_ = 0;    // kData: bytes of the current chunk still to come
  size_t trailer_bytes_ = 0;  // kTrailer: bytes of complete trailer lines so far
};

}  // namespace strata::net
