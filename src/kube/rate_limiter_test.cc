#include "kube/rate_limiter.h"

#include <gtest/gtest.h>

namespace strata::kube {
namespace {

using std::chrono::milliseconds;

TEST(TokenBucketRateLimiterTest, BurstThenOneTokenPerPeriod) {
  FakeClock clock;
  TokenBucketRateLimiter limiter(/*qps=*/5, /*burst=*/10, &clock);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(limiter.Reserve(), Duration::zero()) << i;
  // The bucket is empty: each further request reserves the next token, 200 ms apart.
  EXPECT_EQ(limiter.Reserve(), milliseconds(200));
  EXPECT_EQ(limiter.Reserve(), milliseconds(400));
  EXPECT_EQ(limiter.Reserve(), milliseconds(600));
  clock.Advance(milliseconds(600));  // the three reserved tokens have now been paid for
  EXPECT_EQ(limiter.Reserve(), milliseconds(200));
}

TEST(TokenBucketRateLimiterTest, RefillsUpToTheBurstOnly) {
  FakeClock clock;
  TokenBucketRateLimiter limiter(/*qps=*/10, /*burst=*/3, &clock);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.TryAccept());
  EXPECT_FALSE(limiter.TryAccept());
  clock.Advance(std::chrono::hours(1));  // an idle hour is worth no more than the burst
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.TryAccept()) << i;
  EXPECT_FALSE(limiter.TryAccept());
  clock.Advance(milliseconds(100));
  EXPECT_TRUE(limiter.TryAccept());
  EXPECT_FALSE(limiter.TryAccept());
}

TEST(TokenBucketRateLimiterTest, TheLongRunRateIsQps) {
  FakeClock clock;
  TokenBucketRateLimiter limiter(/*qps=*/50, /*burst=*/5, &clock);
  // 1000 requests, each made as soon as the limiter allows: they span (1000 - 5) / 50 s.
  for (int i = 0; i < 1000; ++i) clock.Advance(limiter.Reserve());
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(clock.Now() - FakeClock::kDefaultStart),
            milliseconds(995 * 20));
}

TEST(TokenBucketRateLimiterTest, TryAcceptDoesNotReserve) {
  FakeClock clock;
  TokenBucketRateLimiter limiter(/*qps=*/1, /*burst=*/1, &clock);
  EXPECT_TRUE(limiter.TryAccept());
  EXPECT_FALSE(limiter.TryAccept());
  EXPECT_FALSE(limiter.TryAccept());
  // The refused tries took nothing: the next token is one period away, not three.
  EXPECT_EQ(limiter.Reserve(), std::chrono::seconds(1));
}

}  // namespace
}  // namespace strata::kube
