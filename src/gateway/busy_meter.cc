#include "gateway/busy_meter.h"

#include <algorithm>

#include "common/check.h"

namespace strata::gateway {

void BusyMeter::Open(TimePoint now) {
  std::lock_guard lock(mutex_);
  if (waiting_++ == 0) since_ = now;
}

Duration BusyMeter::Close(TimePoint now) {
  std::lock_guard lock(mutex_);
  STRATA_CHECK(waiting_ > 0);
  if (--waiting_ > 0) return Duration{0};
  return std::max(Duration{0}, now - since_);
}

Duration BusyMeter::OpenFor(TimePoint now) const {
  std::lock_guard lock(mutex_);
  return waiting_ > 0 ? std::max(Duration{0}, now - since_) : Duration{0};
}

}  // namespace strata::gateway
