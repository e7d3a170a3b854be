#include "net/http_request_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::net {
namespace {

constexpr size_t kMaxHead = 1024;
constexpr uint64_t kMaxBody = 4096;

ParseResult Parse(std::string_view bytes, RequestHead* head) {
  return ParseRequestHead(bytes, kMaxHead, kMaxBody, head);
}

// The HTTP status a head is refused with, or 0 when it parses.
int RefusalOf(std::string_view bytes) {
  RequestHead head;
  ParseResult result = Parse(bytes, &head);
  return result ? 0 : result.error().http_status;
}

TEST(HttpRequestParserTest, ReadsRequestLineFieldsAndFraming) {
  const std::string bytes =
      "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Length:  12 \r\n"
      "Authorization: Bearer k\r\n\r\n{\"model\":1}X";
  RequestHead head;
  ParseResult result = Parse(bytes, &head);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(*result, ParseProgress::kDone);
  EXPECT_EQ(head.method, "POST");
  EXPECT_EQ(head.target, "/v1/chat/completions");
  EXPECT_EQ(head.minor_version, 1);
  EXPECT_EQ(head.content_length, 12u);
  EXPECT_FALSE(head.chunked);
  EXPECT_TRUE(head.keep_alive);
  EXPECT_EQ(head.size, bytes.size() - 12);
  EXPECT_EQ(head.Field("authorization"), "Bearer k");
  EXPECT_EQ(head.Field("CONTENT-length"), "12");
  EXPECT_EQ(head.Field("x-missing"), "");
  ASSERT_EQ(head.fields.size(), 3u);
  EXPECT_EQ(head.fields[0].first, "Host");
}

TEST(HttpRequestParserTest, NeedsMoreUntilTheEmptyLine) {
  const std::string bytes = "GET /v1/models HTTP/1.1\r\nHost: gw\r\n\r\n";
  for (size_t n = 0; n < bytes.size(); ++n) {
    RequestHead head;
    ParseResult result = Parse(std::string_view(bytes).substr(0, n), &head);
    ASSERT_TRUE(result.has_value()) << n << ": " << result.error().message;
    EXPECT_EQ(*result, ParseProgress::kNeedMore) << n;
  }
  RequestHead head;
  EXPECT_EQ(Parse(bytes, &head), ParseProgress::kDone);
}

TEST(HttpRequestParserTest, KeepAliveFollowsVersionAndConnection) {
  RequestHead head;
  ASSERT_TRUE(Parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: Close\r\n\r\n", &head));
  EXPECT_FALSE(head.keep_alive);
  ASSERT_TRUE(Parse("GET / HTTP/1.0\r\n\r\n", &head));
  EXPECT_FALSE(head.keep_alive);
  ASSERT_TRUE(Parse("GET / HTTP/1.0\r\nConnection: foo, keep-alive\r\n\r\n", &head));
  EXPECT_TRUE(head.keep_alive);
  EXPECT_EQ(head.minor_version, 0);
  ASSERT_TRUE(Parse("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n", &head));
  EXPECT_TRUE(head.keep_alive);
  EXPECT_TRUE(head.expect_continue);
  EXPECT_EQ(head.method, "GET");
}

TEST(HttpRequestParserTest, RefusesConflictingOrAmbiguousFraming) {
  EXPECT_EQ(RefusalOf("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"),
            400);
  EXPECT_EQ(RefusalOf("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n"), 400);
  EXPECT_EQ(RefusalOf("POST / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\n"), 400);
  EXPECT_EQ(RefusalOf("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), 400);
  EXPECT_EQ(RefusalOf("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n"), 400);
  EXPECT_EQ(RefusalOf("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"), 400);
  EXPECT_EQ(RefusalOf("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n"),
            400);
  EXPECT_EQ(RefusalOf("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
  EXPECT_EQ(RefusalOf("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), 501);
  EXPECT_EQ(RefusalOf("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"), 501);
  RequestHead head;
  ASSERT_TRUE(Parse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n", &head));
  EXPECT_TRUE(head.chunked);
}

TEST(HttpRequestParserTest, Http11NeedsExactlyOneHost) {
  RequestHead head;
  ParseResult missing = Parse("GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", &head);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().http_status, 400);
  EXPECT_EQ(missing.error().message, "malformed HTTP request: HTTP/1.1 without a Host field");
  ParseResult twice = Parse("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", &head);
  ASSERT_FALSE(twice.has_value());
  EXPECT_EQ(twice.error().message, "malformed HTTP request: more than one Host field");
  // An empty Host is allowed (RFC 9112 section 3.2: a target without an authority), and
  // HTTP/1.0 has no such rule.
  EXPECT_EQ(RefusalOf("GET / HTTP/1.1\r\nHost:\r\n\r\n"), 0);
  EXPECT_EQ(RefusalOf("GET / HTTP/1.0\r\n\r\n"), 0);
}

TEST(HttpRequestParserTest, RefusesMalformedHeadsNamingTheByte) {
  EXPECT_EQ(RefusalOf("GARBAGE\r\n\r\n"), 400);
  EXPECT_EQ(RefusalOf("GET  / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(RefusalOf("GET / HTTP/1.1 \r\n\r\n"), 400);
  EXPECT_EQ(RefusalOf("G(T / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(RefusalOf("GET / HTTP/2.0\r\n\r\n"), 505);
  EXPECT_EQ(RefusalOf("GET / HTTP/1.1\nHost: x\n\n"), 400);
  EXPECT_EQ(RefusalOf("GET / HTTP/1.1\r\nHost : x\r\n\r\n"), 400);
  EXPECT_EQ(RefusalOf("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n"), 400);
  EXPECT_EQ(RefusalOf("GET / HTTP/1.1\r\nNoColon\r\n\r\n"), 400);
  EXPECT_EQ(RefusalOf(std::string("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 26)), 400);
  RequestHead head;
  ParseResult result = Parse("GET / HTTP/1.1\r\nHost: gw\r\nBad Name: x\r\n\r\n", &head);
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message.find("byte 29"), std::string::npos) << result.error().message;
}

// Field values are checked eight bytes at a time: a refused byte is found, and named, at every
// offset of values up to 24 bytes long; tabs and obs-text (bytes from 0x80) pass.
TEST(HttpRequestParserTest, FindsTheRefusedValueByteAtEveryOffset) {
  const std::string prefix = "GET / HTTP/1.1\r\nHost: h\r\nX: ";
  for (size_t length = 1; length <= 24; ++length) {
    std::string value(length, 'v');
    value[length / 2] = '\t';
    value[length - 1] = '\xE9';
    EXPECT_EQ(RefusalOf(prefix + value + "\r\n\r\n"), 0) << length;
    for (size_t at = 0; at < length; ++at) {
      for (char bad : {'\x01', '\x7F', '\x1F'}) {
        std::string refused = value;
        refused[at] = bad;
        RequestHead head;
        ParseResult parsed = Parse(prefix + refused + "\r\n\r\n", &head);
        ASSERT_FALSE(parsed.has_value()) << length << " " << at;
        EXPECT_NE(parsed.error().message.find("byte " + std::to_string(prefix.size() + at)),
                  std::string::npos)
            << parsed.error().message;
      }
    }
  }
}

TEST(HttpRequestParserTest, EnforcesHeadAndBodyLimits) {
  const std::string big_field = "X-Padding: " + std::string(kMaxHead, 'p') + "\r\n";
  EXPECT_EQ(RefusalOf("GET / HTTP/1.1\r\n" + big_field + "\r\n"), 431);
  // Refused before the head ends, as soon as it cannot fit.
  EXPECT_EQ(RefusalOf("GET / HTTP/1.1\r\nX-Padding: " + std::string(kMaxHead, 'p')), 431);
  EXPECT_EQ(RefusalOf(std::string(kMaxHead + 2, '\r')), 431);
  EXPECT_EQ(RefusalOf("POST / HTTP/1.1\r\nContent-Length: 4097\r\n\r\n"), 413);
  EXPECT_EQ(RefusalOf("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4096\r\n\r\n"), 0);
}

TEST(HttpRequestParserTest, DecodesChunkedBodiesAsTheyArrive) {
  const std::string body_bytes = "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\nNEXT";
  for (size_t split = 0; split <= body_bytes.size(); ++split) {
    ChunkedBodyDecoder decoder(kMaxBody, kMaxHead);
    ParseResult first = decoder.Feed(std::string_view(body_bytes).substr(0, split), 100);
    ASSERT_TRUE(first.has_value()) << split << ": " << first.error().message;
    ParseResult second = decoder.Feed(body_bytes, 100);
    ASSERT_TRUE(second.has_value()) << split << ": " << second.error().message;
    EXPECT_EQ(*second, ParseProgress::kDone);
    EXPECT_EQ(decoder.body(), "hello world");
    EXPECT_EQ(decoder.consumed(), body_bytes.size() - 4);
  }
}

TEST(HttpRequestParserTest, RefusesBadChunks) {
  auto refusal = [](std::string_view bytes, uint64_t max_body = kMaxBody) {
    ChunkedBodyDecoder decoder(max_body, kMaxHead);
    ParseResult result = decoder.Feed(bytes, 0);
    return result ? 0 : result.error().http_status;
  };
  EXPECT_EQ(refusal("zz\r\n"), 400);
  EXPECT_EQ(refusal("5\r\nhelloXX"), 400);
  EXPECT_EQ(refusal("5 x\r\n"), 400);
  EXPECT_EQ(refusal("5\nhello\r\n"), 400);
  EXPECT_EQ(refusal("fffffffffffffffffff\r\n"), 400);
  EXPECT_EQ(refusal("6\r\nhello!\r\n0\r\n\r\n", 5), 413);
  EXPECT_EQ(refusal("0\r\n" + std::string(kMaxHead + 1, 'x')), 431);
  EXPECT_EQ(refusal(std::string(2000, '0')), 400);
}

}  // namespace
}  // namespace strata::net
