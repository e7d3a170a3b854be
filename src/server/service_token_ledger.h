#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "observe/cost_ledger.h"

namespace strata::server {

// Tokens each service served over time, from the gateway's running totals (tokens since the
// gateway started, per service): what the cost endpoint divides a service's cost by for its
// cost per million tokens, over a window or per step of it. Each Record adds the growth of the
// totals since the last one (a total that went down, a restarted gateway, counts from zero) to
// the bucket of the minute it falls in. Once a minute is over its bucket goes to the cost
// ledger (Persist), so the counts survive a restart of the control plane, all but the minute in
// progress when it was killed; without a ledger, buckets stay in memory for `keep`.
//
// Written by the serving loop, read by the cost endpoint's threads: thread-safe.
class ServiceTokenLedger {
 public:
  explicit ServiceTokenLedger(Duration keep = std::chrono::hours(24 * 366));

  // From now on, finished minutes are written to `ledger` and read back from it.
  void Persist(std::shared_ptr<observe::CostLedger> ledger);

  // Records the running totals at `now`. REQUIRES: `now` does not go backwards.
  void Record(TimePoint now, const std::map<std::string, double>& totals);

  // Tokens each service served in the minutes that start in [from, to): a window counts by the
  // minute. Services that served none are absent.
  std::map<std::string, double> Between(TimePoint from, TimePoint to) const;

 private:
  using Counts = std::map<std::string, double>;

  // REQUIRES: mutex_ held. Moves the bucket of minute_ to the ledger, or to memory without one
  // (or when the ledger refuses it).
  void FinishMinuteLocked();

  const Duration keep_;
  mutable std::mutex mutex_;
  std::shared_ptr<observe::CostLedger> ledger_;
  Counts last_totals_;                // the gateway's totals at the last Record
  TimePoint minute_{};                // the minute in progress
  Counts current_;                    // its tokens so far
  std::map<TimePoint, Counts> past_;  // finished minutes not in a ledger, oldest first
};

}  // namespace strata::server
