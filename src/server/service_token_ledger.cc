#include "server/service_token_ledger.h"

namespace strata::server {

ServiceTokenLedger::ServiceTokenLedger(Duration sample_interval, Duration keep)
    : sample_interval_(sample_interval), keep_(keep) {}

void ServiceTokenLedger::Record(TimePoint now, std::map<std::string, double> totals) {
  std::lock_guard lock(mutex_);
  latest_ = {now, std::move(totals)};
  if (samples_.empty() || now - samples_.back().at >= sample_interval_) {
    samples_.push_back(latest_);
  }
  while (!samples_.empty() && now - samples_.front().at > keep_) samples_.pop_front();
}

std::map<std::string, double> ServiceTokenLedger::Between(TimePoint from, TimePoint to) const {
  std::lock_guard lock(mutex_);
  // The last sample at or before `at` (the latest record counts as one); null when none is.
  auto at_or_before = [&](TimePoint at) -> const Sample* {
    if (latest_.at != TimePoint{} && latest_.at <= at) return &latest_;
    const Sample* found = nullptr;
    for (const Sample& sample : samples_) {
      if (sample.at > at) break;
      found = &sample;
    }
    return found;
  };
  std::map<std::string, double> out;
  const Sample* end = at_or_before(to);
  if (end == nullptr) return out;
  const Sample* start = at_or_before(from);
  for (const auto& [service, total] : end->totals) {
    double before = 0;
    if (start != nullptr) {
      auto it = start->totals.find(service);
      if (it != start->totals.end() && it->second <= total) before = it->second;
    }
    out[service] = total - before;
  }
  return out;
}

}  // namespace strata::server
