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

std::map<std::string, double> ServiceTokenLedger::Over(Duration window) const {
  std::lock_guard lock(mutex_);
  const Sample* start = nullptr;
  for (const Sample& sample : samples_) {
    if (start != nullptr && sample.at > latest_.at - window) break;
    start = &sample;
  }
  std::map<std::string, double> out;
  for (const auto& [service, total] : latest_.totals) {
    double before = 0;
    if (start != nullptr && start->at <= latest_.at - window) {
      auto it = start->totals.find(service);
      if (it != start->totals.end() && it->second <= total) before = it->second;
    }
    out[service] = total - before;
  }
  return out;
}

}  // namespace strata::server
