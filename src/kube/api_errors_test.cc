#include "kube/api_errors.h"

#include <gtest/gtest.h>

namespace strata::kube {
namespace {

std::string ApiStatus(int code, std::string_view reason, std::string_view message,
                      std::string_view details = "{}") {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")" +
         std::string(message) + R"(","reason":")" + std::string(reason) + R"(","details":)" +
         std::string(details) + R"(,"code":)" + std::to_string(code) + "}";
}

TEST(StatusFromApiResponseTest, MapsCodesAndReasons) {
  struct Case {
    int http;
    const char* reason;
    StatusCode expected;
  };
  const Case cases[] = {
      {400, "BadRequest", StatusCode::kInvalidArgument},
      {401, "Unauthorized", StatusCode::kUnauthenticated},
      {403, "Forbidden", StatusCode::kPermissionDenied},
      {404, "NotFound", StatusCode::kNotFound},
      {405, "MethodNotAllowed", StatusCode::kUnimplemented},
      {409, "AlreadyExists", StatusCode::kAlreadyExists},
      {409, "Conflict", StatusCode::kConflict},
      {410, "Expired", StatusCode::kExpired},
      {410, "Gone", StatusCode::kExpired},
      {413, "RequestEntityTooLarge", StatusCode::kResourceExhausted},
      {415, "UnsupportedMediaType", StatusCode::kInvalidArgument},
      {422, "Invalid", StatusCode::kInvalidArgument},
      {429, "TooManyRequests", StatusCode::kResourceExhausted},
      {500, "InternalError", StatusCode::kInternal},
      {503, "ServiceUnavailable", StatusCode::kUnavailable},
      {504, "Timeout", StatusCode::kDeadlineExceeded},
      {418, "", StatusCode::kInvalidArgument},
      {502, "", StatusCode::kUnavailable},
  };
  for (const Case& c : cases) {
    Status status = StatusFromApiResponse(c.http, ApiStatus(c.http, c.reason, "m"), "GET /x");
    EXPECT_EQ(status.code(), c.expected) << c.http << " " << c.reason;
  }
}

TEST(StatusFromApiResponseTest, TheMessageNamesTheRequestTheReasonAndTheServersWords) {
  Status status =
      StatusFromApiResponse(409, ApiStatus(409, "AlreadyExists", R"(pods \"p1\" already exists)"),
                            "POST https://127.0.0.1:6443/api/v1/namespaces/default/pods");
  EXPECT_EQ(status.message(),
            "POST https://127.0.0.1:6443/api/v1/namespaces/default/pods: AlreadyExists: pods "
            "\"p1\" already exists");
}

TEST(StatusFromApiResponseTest, ATooLargeResourceVersionIsExpiredSoTheCallerRelists) {
  std::string body = ApiStatus(504, "Timeout", "Too large resource version",
                               R"({"causes":[{"reason":"ResourceVersionTooLarge"}]})");
  EXPECT_EQ(StatusFromApiResponse(504, body, "GET /x").code(), StatusCode::kExpired);
}

TEST(StatusFromApiResponseTest, ABodyThatIsNoStatusIsQuoted) {
  Status status = StatusFromApiResponse(503, "upstream connect error\n", "GET /x");
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "GET /x: HTTP 503: upstream connect error");
  status = StatusFromApiResponse(404, std::string(500, 'x'), "GET /x");
  EXPECT_EQ(status.message(), "GET /x: HTTP 404: " + std::string(200, 'x') + "...");
  EXPECT_EQ(StatusFromApiResponse(403, "", "GET /x").message(), "GET /x: HTTP 403: (no message)");
}

TEST(StatusFromWatchErrorTest, AnErrorEventWithCode410IsExpired) {
  nlohmann::json object =
      nlohmann::json::parse(ApiStatus(410, "Expired", "too old resource version: 2 (318)"));
  Status status = StatusFromWatchError(object, "watch of pods");
  EXPECT_EQ(status.code(), StatusCode::kExpired);
  EXPECT_EQ(status.message(), "watch of pods: Expired: too old resource version: 2 (318)");
  EXPECT_EQ(StatusFromWatchError(nlohmann::json::object(), "w").code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace strata::kube
