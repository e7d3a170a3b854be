#pragma once

// A strict HTTP/1.1 request reader that works in place: the request line and header fields are
// views into the caller's bytes, so reading a request allocates nothing but its field list
// (whose capacity the caller may reuse). Boost-free; used by the gateway's client connections.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <utility>
#include <vector>

#include "net/http_syntax.h"

namespace strata::net {

// Why a request was refused, with the HTTP status to answer and a message that names the byte
// offset (from the start of the request) where reading stopped.
struct RequestError {
  int http_status = 400;  // 400 malformed, 413 body too large, 431 head too large, 501, 505
  std::string message;
};

// The request line and header fields of one request. Views point into the bytes given to
// ParseRequestHead and stay valid while those bytes do. Plain data.
struct RequestHead {
  std::string_view method;
  std::string_view target;
  int minor_version = 1;  // HTTP/1.<minor_version>: 0 or 1
  FieldList fields;       // in arrival order; values without surrounding whitespace
  std::optional<uint64_t> content_length;  // set when the request has a Content-Length
  bool chunked = false;                    // Transfer-Encoding: chunked
  bool keep_alive = true;                  // the connection may carry another request after it
  bool expect_continue = false;            // Expect: 100-continue
  size_t size = 0;                         // bytes of the head, its final empty line included

  // The value of the first field called `name` (case-insensitive), or empty when none.
  std::string_view Field(std::string_view name) const { return FindField(fields, name); }
};

using ParseResult = tl::expected<ParseProgress, RequestError>;

// Reads the request head at the start of `bytes` into `*head` (its field list is cleared first,
// its capacity kept). Empty lines before the request line are skipped (and counted in size).
//
// Returns kDone when the whole head was read, kNeedMore when `bytes` ends before it does (and
// is still within `max_head_bytes`). Returns an error for a malformed head (400), one larger
// than `max_head_bytes` (431), a body larger than `max_body_bytes` by its Content-Length (413),
// an HTTP version other than 1.0 and 1.1 (505), a transfer coding other than chunked (501), or
// both Content-Length and Transfer-Encoding, several Content-Length fields, or an HTTP/1.1
// request without exactly one Host field (400, RFC 9112 section 3.2).
ParseResult ParseRequestHead(std::string_view bytes, size_t max_head_bytes, uint64_t max_body_bytes,
                             RequestHead* head);

// Decodes a chunked request body as its bytes arrive: call Feed with everything received after
// the head so far (the same prefix grows from call to call); it decodes the chunks it has not
// seen yet (once done, it stays done). Trailer fields are read and dropped. Not thread-safe.
class ChunkedBodyDecoder {
 public:
  // REQUIRES: `max_body_bytes` and `max_trailer_bytes` bound the decoded body and the trailer.
  ChunkedBodyDecoder(uint64_t max_body_bytes, size_t max_trailer_bytes)
      : max_body_bytes_(max_body_bytes), decoder_(max_trailer_bytes) {}

  // `bytes`: the bytes after the head, `offset_base` their offset in the request (for
  // messages). Returns kDone once the last chunk and the trailer were read (see consumed()),
  // kNeedMore while they have not, or an error: malformed chunk framing (400), a body larger
  // than the limit (413), a trailer larger than its limit (431).
  ParseResult Feed(std::string_view bytes, size_t offset_base);

  // The body decoded so far.
  std::string& body() { return body_; }
  // Bytes of `bytes` the chunked body took, once Feed returned kDone.
  size_t consumed() const { return position_; }

 private:
  uint64_t max_body_bytes_;
  ChunkedDecoder decoder_;
  std::string body_;
  size_t position_ = 0;  // bytes of the input decoded so far
};

}  // namespace strata::net
