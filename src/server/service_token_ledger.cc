#include "server/service_token_ledger.h"

#include <spdlog/spdlog.h>

namespace strata::server {
namespace {

TimePoint MinuteOf(TimePoint at) { return std::chrono::floor<std::chrono::minutes>(at); }

void AddInto(std::map<std::string, double>& into, const std::map<std::string, double>& counts) {
  for (const auto& [service, tokens] : counts) into[service] += tokens;
}

}  // namespace

ServiceTokenLedger::ServiceTokenLedger(Duration keep) : keep_(keep) {}

void ServiceTokenLedger::Persist(std::shared_ptr<observe::CostLedger> ledger) {
  std::lock_guard lock(mutex_);
  ledger_ = std::move(ledger);
}

void ServiceTokenLedger::Record(TimePoint now, const std::map<std::string, double>& totals) {
  std::lock_guard lock(mutex_);
  const TimePoint minute = MinuteOf(now);
  if (minute != minute_) {
    FinishMinuteLocked();
    minute_ = minute;
  }
  for (const auto& [service, total] : totals) {
    auto last = last_totals_.find(service);
    const double before = last == last_totals_.end() || last->second > total ? 0 : last->second;
    if (total > before) current_[service] += total - before;
  }
  last_totals_ = totals;
  while (!past_.empty() && now - past_.begin()->first > keep_) past_.erase(past_.begin());
}

void ServiceTokenLedger::FinishMinuteLocked() {
  if (current_.empty()) return;
  if (ledger_ != nullptr) {
    Status written = ledger_->AddServiceTokens(minute_, current_);
    if (written.ok()) {
      current_.clear();
      return;
    }
    spdlog::warn("service tokens of {}: kept in memory: {}", FormatRfc3339(minute_),
                 written.message());
  }
  AddInto(past_[minute_], current_);
  current_.clear();
}

std::map<std::string, double> ServiceTokenLedger::Between(TimePoint from, TimePoint to) const {
  std::lock_guard lock(mutex_);
  Counts out;
  if (ledger_ != nullptr) {
    Result<Counts> stored = ledger_->ServiceTokensBetween(from, to);
    if (stored) {
      out = std::move(*stored);
    } else {
      spdlog::warn("service tokens: {}", stored.error().message());
    }
  }
  for (auto it = past_.lower_bound(from); it != past_.end() && it->first < to; ++it) {
    AddInto(out, it->second);
  }
  if (minute_ >= from && minute_ < to) AddInto(out, current_);
  return out;
}

}  // namespace strata::server
