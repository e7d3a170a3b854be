#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "common/clock.h"

namespace strata::server {

// Tokens each service served over time, from the gateway's running totals (tokens since the
// gateway started, per service): what the cost endpoint divides a service's cost by for its
// cost per million tokens, over a window or per step of it. Keeps one sample per
// `sample_interval` for `keep`, plus the latest. In memory: a restart of the control plane
// starts it empty.
//
// Written by the serving loop, read by the cost endpoint's threads: thread-safe.
class ServiceTokenLedger {
 public:
  explicit ServiceTokenLedger(Duration sample_interval = std::chrono::minutes(1),
                              Duration keep = std::chrono::hours(24 * 366));

  // Records the running totals at `now`. REQUIRES: `now` does not go backwards.
  void Record(TimePoint now, std::map<std::string, double> totals);

  // Tokens each service served in [from, to]: its total at the last sample at or before `to`
  // (the latest record for a `to` at or after it) minus its total at the last sample at or
  // before `from` (zero when there is none: the gateway began after `from`). A total that went
  // down (the gateway restarted) counts from zero. Services without a sample by `to` are absent.
  std::map<std::string, double> Between(TimePoint from, TimePoint to) const;

 private:
  struct Sample {
    TimePoint at;
    std::map<std::string, double> totals;
  };

  const Duration sample_interval_;
  const Duration keep_;
  mutable std::mutex mutex_;
  std::deque<Sample> samples_;  // oldest first, one per sample_interval
  Sample latest_;
};

}  // namespace strata::server
