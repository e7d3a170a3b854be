#include "kube/rate_limiter.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace strata::kube {

TokenBucketRateLimiter::TokenBucketRateLimiter(double qps, int burst, const Clock* clock)
    : qps_(qps), burst_(burst), clock_(clock), tokens_(burst), last_(clock->Now()) {
  STRATA_CHECK(qps > 0 && burst >= 1);
}

void TokenBucketRateLimiter::RefillLocked(TimePoint now) {
  if (now <= last_) return;
  double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min<double>(burst_, tokens_ + elapsed * qps_);
  last_ = now;
}

Duration TokenBucketRateLimiter::Reserve() {
  std::lock_guard lock(mutex_);
  RefillLocked(clock_->Now());
  tokens_ -= 1;
  if (tokens_ >= 0) return Duration::zero();
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

bool TokenBucketRateLimiter::TryAccept() {
  std::lock_guard lock(mutex_);
  RefillLocked(clock_->Now());
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

}  // namespace strata::kube
