#include "common/status.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Err(InvalidArgumentError("odd: " + std::to_string(x)));
  return x / 2;
}

Result<int> Quarter(int x) {
  ASSIGN_OR_RETURN(int half, Half(x));
  ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

Result<int> CheckPositive(int x) {
  RETURN_IF_ERROR(x > 0 ? Status::Ok() : InvalidArgumentError("not positive"));
  return x;
}

TEST(StatusTest, OkAndErrors) {
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().ToString(), "OK");
  Status s = NotFoundError("job \"a\" not found");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "NotFound: job \"a\" not found");
  EXPECT_EQ(s.WithPrefix("get").message(), "get: job \"a\" not found");
}

TEST(StatusTest, HttpMapping) {
  EXPECT_EQ(HttpStatusFor(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(StatusCode::kConflict), 409);
  EXPECT_EQ(HttpStatusFor(StatusCode::kExpired), 410);
  EXPECT_EQ(HttpStatusFor(StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusFor(StatusCode::kUnavailable), 503);
}

TEST(StatusTest, ResultPropagation) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "odd: 3");
  EXPECT_EQ(*CheckPositive(3), 3);
  EXPECT_EQ(CheckPositive(-1).error().message(), "not positive");
}

}  // namespace
}  // namespace strata
