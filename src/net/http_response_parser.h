#pragma once

// A strict HTTP/1.1 response reader that works in place, for a proxy reading its upstream's
// answers: the status line and header fields are views into the caller's bytes, and the body
// is framed (Content-Length, chunked, or until the connection closes) as its bytes arrive,
// each piece a view into them. Boost-free; used by the gateway's upstream connections.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "net/http_syntax.h"

namespace strata::net {

// How a response's body ends (RFC 9112 section 6.3, for a response to a request other than
// HEAD or CONNECT).
enum class BodyFraming {
  kNone,        // 1xx, 204 and 304 have none
  kLength,      // Content-Length bytes
  kChunked,     // Transfer-Encoding ending in chunked
  kUntilClose,  // neither: the body ends when the server closes the connection
};

// The status line and header fields of one response. Views point into the bytes given to
// ParseResponseHead and stay valid while those bytes do. Plain data.
struct ResponseHead {
  int status = 0;
  std::string_view reason;
  int minor_version = 1;  // HTTP/1.<minor_version>: 0 or 1
  FieldList fields;       // in arrival order; values without surrounding whitespace
  std::optional<uint64_t> content_length;
  BodyFraming framing = BodyFraming::kNone;
  bool keep_alive = true;  // the connection may carry another exchange after this response
  size_t size = 0;         // bytes of the head, its final empty line included

  // The value of the first field called `name` (case-insensitive), or empty when none.
  std::string_view Field(std::string_view name) const { return FindField(fields, name); }
  // An interim (1xx) response: the final one follows it on the connection.
  bool interim() const { return status >= 100 && status < 200; }
};

// Why upstream bytes are not a response the proxy can relay; the message names the byte offset.
struct ResponseError {
  std::string message;
};

using ResponseParseResult = tl::expected<ParseProgress, ResponseError>;

// Reads the response head at the start of `bytes` into `*head` (its field list is cleared
// first, its capacity kept). Returns kDone when the whole head was read, kNeedMore when `bytes`
// ends before it does (and is still within `max_head_bytes`), or an error: a malformed status
// line or field, a head larger than `max_head_bytes`, a version other than HTTP/1.0 and 1.1,
// several or invalid Content-Length fields, or both Content-Length and Transfer-Encoding (a
// response a proxy must not pass on, RFC 9112 section 6.3).
ResponseParseResult ParseResponseHead(std::string_view bytes, size_t max_head_bytes,
                                      ResponseHead* head);

// Frames a response's body as its bytes arrive: give Next the bytes received after the head
// and not consumed yet; it returns how many it used and the body bytes among them (a view into
// them; a chunked body's framing is taken off). Not thread-safe.
class ResponseBodyReader {
 public:
  // `max_trailer_bytes` bounds a chunked body's trailer.
  ResponseBodyReader(const ResponseHead& head, size_t max_trailer_bytes);

  // `input`: the unconsumed bytes; `offset`: where they start in the body (for errors). A
  // step that consumes nothing before done() needs more bytes.
  tl::expected<ChunkedDecoder::Step, ResponseError> Next(std::string_view input, size_t offset);

  // The server closed the connection: returns whether that ends the body (only a body framed
  // by the close; any other is then cut short).
  bool EndOfInput();

  bool done() const;

 private:
  BodyFraming framing_;
  uint64_t remaining_ = 0;  // kLength: bytes still to come
  ChunkedDecoder chunked_;
  bool closed_ = false;  // kUntilClose: the server closed the connection
};

}  // namespace strata::net
