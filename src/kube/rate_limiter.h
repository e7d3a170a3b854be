#pragma once

#include <mutex>

#include "common/clock.h"

namespace strata::kube {

// Client-side rate limiting as client-go's flowcontrol.NewTokenBucketRateLimiter: a bucket of
// `burst` tokens refilled at `qps` per second; each request takes one. A request that finds the
// bucket empty reserves the next token ahead of time and waits for it, so waiters are served in
// order and the long-run rate never exceeds qps. Time is read from the injected clock, so tests
// advance a FakeClock instead of sleeping.
//
// Owned by its Client; thread-safe.
class TokenBucketRateLimiter {
 public:
  // REQUIRES: qps > 0, burst >= 1; `clock` outlives the limiter. The bucket starts full.
  TokenBucketRateLimiter(double qps, int burst, const Clock* clock);

  // Takes a token and returns how long the caller must wait before using it: zero when one was
  // in the bucket, else the time until the reserved token is refilled.
  Duration Reserve();

  // Takes a token only if one is available now.
  bool TryAccept();

  double qps() const { return qps_; }
  int burst() const { return burst_; }

 private:
  void RefillLocked(TimePoint now);

  const double qps_;
  const int burst_;
  const Clock* clock_;
  std::mutex mutex_;
  double tokens_;  // may go negative: tokens reserved by waiters
  TimePoint last_;
};

}  // namespace strata::kube
