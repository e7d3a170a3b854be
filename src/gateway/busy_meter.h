#pragma once

#include <cstdint>
#include <mutex>

#include "common/clock.h"

namespace strata::gateway {

// How long a replica has been busy prefilling, as the gateway sees it: the time during which at
// least one request it sent there was still waiting for its first token (overlapping waits
// count once). The autoscaler turns it into each replica's capacity
// (autoscaler::LoadSample::prefill_busy_seconds_total). Request paths open a wait when they send
// and close it at the first token, or when the request ends without one; the meter reports each
// busy spell as it ends, and the length of the one still open. One per replica, inside its
// EndpointRuntime. Thread-safe (a mutex: two short critical sections per request).
class BusyMeter {
 public:
  // A request starts waiting for its first token at `now`.
  void Open(TimePoint now);
  // One waiting request got its first token (or ended) at `now`. Returns the length of the busy
  // spell this ended when it was the last one waiting, else zero.
  // REQUIRES: as many Open calls before as Close calls.
  Duration Close(TimePoint now);
  // How long the spell in progress has lasted at `now`; zero when no request waits.
  Duration OpenFor(TimePoint now) const;

 private:
  mutable std::mutex mutex_;
  int64_t waiting_ = 0;
  TimePoint since_{};
};

}  // namespace strata::gateway
