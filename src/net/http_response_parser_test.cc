#include "net/http_response_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::net {
namespace {

constexpr size_t kMaxHead = 1024;

ResponseParseResult Parse(std::string_view bytes, ResponseHead* head) {
  return ParseResponseHead(bytes, kMaxHead, head);
}

// The rejection message of a head, or empty when it parses.
std::string RejectionOf(std::string_view bytes) {
  ResponseHead head;
  ResponseParseResult result = Parse(bytes, &head);
  return result ? "" : result.error().message;
}

// Reads the body that follows `head` in `bytes`, `piece` bytes at a time, then the end of the
// input; returns the body, or "error: ..." / "cut: ..." when it did not end well.
std::string ReadBody(const ResponseHead& head, std::string_view bytes, size_t piece) {
  ResponseBodyReader reader(head, kMaxHead);
  std::string body;
  size_t given = 0;
  size_t consumed = 0;
  while (!reader.done()) {
    auto step = reader.Next(bytes.substr(consumed, given - consumed), consumed);
    if (!step) return "error: " + step.error().message;
    consumed += step->consumed;
    body.append(step->data);
    if (step->consumed == 0 && !reader.done()) {
      if (given == bytes.size()) return reader.EndOfInput() ? body : "cut: " + body;
      given = std::min(bytes.size(), given + piece);
    }
  }
  return body;
}

TEST(HttpResponseParserTest, ReadsStatusLineFieldsAndLengthFraming) {
  const std::string bytes =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length:  11 \r\n"
      "x-request-id: abc\r\n\r\n{\"ok\":true}NEXT";
  ResponseHead head;
  ResponseParseResult result = Parse(bytes, &head);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(*result, ParseProgress::kDone);
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.reason, "OK");
  EXPECT_EQ(head.minor_version, 1);
  EXPECT_EQ(head.framing, BodyFraming::kLength);
  EXPECT_EQ(head.content_length, 11u);
  EXPECT_TRUE(head.keep_alive);
  EXPECT_EQ(head.Field("CONTENT-TYPE"), "application/json");
  ASSERT_EQ(head.fields.size(), 3u);
  EXPECT_EQ(head.fields[2].first, "x-request-id");
  const std::string_view body = std::string_view(bytes).substr(head.size);
  for (size_t piece : {1u, 3u, 100u}) {
    EXPECT_EQ(ReadBody(head, body, piece), "{\"ok\":true}") << piece;
  }
}

TEST(HttpResponseParserTest, NeedsMoreUntilTheEmptyLine) {
  const std::string bytes = "HTTP/1.1 204 No Content\r\nServer: engine\r\n\r\n";
  for (size_t n = 0; n < bytes.size(); ++n) {
    ResponseHead head;
    ResponseParseResult result = Parse(std::string_view(bytes).substr(0, n), &head);
    ASSERT_TRUE(result.has_value()) << n << ": " << result.error().message;
    EXPECT_EQ(*result, ParseProgress::kNeedMore) << n;
  }
  ResponseHead head;
  ASSERT_EQ(Parse(bytes, &head), ParseProgress::kDone);
  EXPECT_EQ(head.framing, BodyFraming::kNone);
  EXPECT_EQ(ReadBody(head, "", 1), "");
}

TEST(HttpResponseParserTest, DecodesChunkedBodiesPieceByPiece) {
  const std::string bytes =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
      "d;ext=1\r\ndata: hello\n\n\r\n"
      "E\r\ndata: [DONE]\n\n\r\n"
      "0\r\nX-Trailer: yes\r\n\r\n";
  ResponseHead head;
  ASSERT_EQ(Parse(bytes, &head), ParseProgress::kDone);
  EXPECT_EQ(head.framing, BodyFraming::kChunked);
  EXPECT_TRUE(head.keep_alive);
  const std::string_view body = std::string_view(bytes).substr(head.size);
  for (size_t piece : {1u, 2u, 7u, 1000u}) {
    EXPECT_EQ(ReadBody(head, body, piece), "data: hello\n\ndata: [DONE]\n\n") << piece;
  }
  EXPECT_EQ(ReadBody(head, body.substr(0, body.size() - 2), 5),
            "cut: data: hello\n\ndata: [DONE]\n\n");
  EXPECT_EQ(ReadBody(head, "zz\r\n", 5).substr(0, 6), "error:");
}

TEST(HttpResponseParserTest, AChunkSizeLineAtItsLimitReadsTheSameWhenItsLfComesLater) {
  // 1,024 bytes of size and extension (the limit), then CRLF: a piece that ends between the CR
  // and the LF once read the CR as a 1,025th byte of the line (found by http_response_fuzz).
  const std::string line = "0;x=" + std::string(1020, 'a');
  const std::string head_bytes = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string bytes = head_bytes + line + "\r\n\r\n";
  ResponseHead head;
  ASSERT_EQ(Parse(bytes, &head), ParseProgress::kDone);
  const std::string_view body = std::string_view(bytes).substr(head.size);
  for (size_t piece : {1u, 1025u, 5000u}) EXPECT_EQ(ReadBody(head, body, piece), "") << piece;
  // One byte more is over the limit however it arrives.
  const std::string over = head_bytes + line + "a\r\n\r\n";
  for (size_t piece : {1u, 5000u}) {
    EXPECT_EQ(ReadBody(head, std::string_view(over).substr(head.size), piece).substr(0, 6),
              "error:")
        << piece;
  }
}

TEST(HttpResponseParserTest, BodyWithoutLengthEndsWithTheConnection) {
  ResponseHead head;
  ASSERT_EQ(Parse("HTTP/1.0 200 OK\r\n\r\n", &head), ParseProgress::kDone);
  EXPECT_EQ(head.framing, BodyFraming::kUntilClose);
  EXPECT_FALSE(head.keep_alive);
  EXPECT_EQ(ReadBody(head, "all of it", 4), "all of it");
  // A length-framed body cut by the close is not complete.
  ASSERT_EQ(Parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", &head), ParseProgress::kDone);
  EXPECT_EQ(ReadBody(head, "short", 2), "cut: short");
  // A final coding other than chunked, too, can only end with the connection.
  ASSERT_EQ(Parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", &head),
            ParseProgress::kDone);
  EXPECT_EQ(head.framing, BodyFraming::kUntilClose);
}

TEST(HttpResponseParserTest, KeepAliveFollowsVersionAndConnection) {
  ResponseHead head;
  ASSERT_TRUE(Parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", &head));
  EXPECT_FALSE(head.keep_alive);
  ASSERT_TRUE(Parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", &head));
  EXPECT_FALSE(head.keep_alive);
  ASSERT_TRUE(
      Parse("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", &head));
  EXPECT_TRUE(head.keep_alive);
}

TEST(HttpResponseParserTest, InterimResponsesHaveNoBody) {
  ResponseHead head;
  ASSERT_EQ(Parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n", &head), ParseProgress::kDone);
  EXPECT_TRUE(head.interim());
  EXPECT_EQ(head.framing, BodyFraming::kNone);
  EXPECT_EQ(head.size, 25u);
  ASSERT_TRUE(Parse("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", &head));
  EXPECT_EQ(head.reason, "");
  EXPECT_FALSE(head.interim());
}

TEST(HttpResponseParserTest, RejectsMalformedHeadsNamingTheByte) {
  EXPECT_NE(RejectionOf("HTTP/2 200 OK\r\n\r\n"), "");
  EXPECT_NE(RejectionOf("HTTP/1.1 20 OK\r\n\r\n"), "");
  EXPECT_NE(RejectionOf("HTTP/1.1 200OK\r\n\r\n"), "");
  EXPECT_NE(RejectionOf("HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n"), "");
  EXPECT_NE(RejectionOf("HTTP/1.1 200 OK\r\n folded: yes\r\n\r\n"), "");
  EXPECT_NE(RejectionOf("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n"), "");
  EXPECT_NE(RejectionOf("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"), "");
  const std::string both =
      RejectionOf("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n");
  EXPECT_NE(both.find("both Content-Length and Transfer-Encoding"), std::string::npos) << both;
  const std::string bad_name = RejectionOf("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n");
  EXPECT_NE(bad_name.find("byte 20"), std::string::npos) << bad_name;
  const std::string large = RejectionOf("HTTP/1.1 200 OK\r\nX: " + std::string(kMaxHead, 'a'));
  EXPECT_NE(large.find("larger than 1024 bytes"), std::string::npos) << large;
}

}  // namespace
}  // namespace strata::net
