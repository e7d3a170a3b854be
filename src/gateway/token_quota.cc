#include "gateway/token_quota.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace strata::gateway {
namespace {

constexpr double kSecondsPerMinute = 60.0;

}  // namespace

QuotaLedger::QuotaLedger(const std::vector<TenantConfig>& tenants, int64_t max_queued,
                         TimePoint now)
    : max_queued_(max_queued) {
  for (size_t i = 0; i < tenants.size(); ++i) SetQuota(i, tenants[i].tokens_per_minute, now);
}

void QuotaLedger::SetQuota(uint64_t tenant, int64_t tokens_per_minute, TimePoint now) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (tokens_per_minute <= 0) {
    buckets_.erase(tenant);
    return;
  }
  auto [it, added] = buckets_.try_emplace(tenant);
  Bucket& bucket = it->second;
  if (added) {
    bucket.available = static_cast<double>(tokens_per_minute);
    bucket.refilled_at = now;
  } else {
    Refill(bucket, now);
  }
  bucket.capacity = tokens_per_minute;
  bucket.available = std::min(bucket.available, static_cast<double>(tokens_per_minute));
}

QuotaLedger::Bucket* QuotaLedger::BucketOf(uint64_t tenant) {
  auto it = buckets_.find(tenant);
  return it == buckets_.end() ? nullptr : &it->second;
}

void QuotaLedger::Refill(Bucket& bucket, TimePoint now) const {
  if (now <= bucket.refilled_at) return;
  const double rate = static_cast<double>(bucket.capacity) / kSecondsPerMinute;
  bucket.available = std::min(static_cast<double>(bucket.capacity),
                              bucket.available + rate * ToSeconds(now - bucket.refilled_at));
  bucket.refilled_at = now;
}

int64_t QuotaLedger::Clamp(const Bucket& bucket, int64_t tokens) const {
  return std::min(tokens, bucket.capacity);
}

Duration QuotaLedger::RetryAfter(const Bucket& bucket, int64_t tokens) const {
  // Only limited tenants have a bucket: the rate is positive.
  const double rate = static_cast<double>(bucket.capacity) / kSecondsPerMinute;
  const double missing = static_cast<double>(Clamp(bucket, tokens)) - bucket.available;
  const double seconds = std::max(1.0, std::ceil(missing / rate));
  return std::chrono::seconds(static_cast<int64_t>(seconds));
}

bool QuotaLedger::FirstOfTenant(uint64_t ticket, const Waiter& waiter) const {
  for (const QueueKey& key : queue_) {
    const Waiter& other = waiters_.at(key.second);
    if (other.tenant == waiter.tenant) return key.second == ticket;
  }
  return false;
}

QuotaDecision QuotaLedger::Request(uint64_t tenant, int64_t tokens, PriorityClass priority,
                                   TimePoint now) {
  std::lock_guard<std::mutex> lock(mutex_);
  Bucket* limited = BucketOf(tenant);
  if (limited == nullptr) return {};
  Bucket& bucket = *limited;
  Refill(bucket, now);
  bool tenant_has_waiters = false;
  for (const auto& [ticket, waiter] : waiters_) tenant_has_waiters |= waiter.tenant == tenant;
  const int64_t needed = Clamp(bucket, tokens);
  if (!tenant_has_waiters && bucket.available >= static_cast<double>(needed)) {
    bucket.available -= static_cast<double>(needed);
    return {};
  }
  QuotaDecision decision;
  if (static_cast<int64_t>(queue_.size()) >= max_queued_) {
    // Full: the newcomer may take the place of the least important, newest waiter.
    if (queue_.empty() || queue_.rbegin()->first <= static_cast<int>(priority)) {
      decision.kind = QuotaDecision::Kind::kRejected;
      decision.retry_after = RetryAfter(bucket, tokens);
      return decision;
    }
    const uint64_t victim = queue_.rbegin()->second;
    const Waiter& displaced = waiters_.at(victim);
    const Bucket* displaced_bucket = BucketOf(displaced.tenant);
    displaced_[victim] = displaced_bucket == nullptr
                             ? std::chrono::seconds(1)
                             : RetryAfter(*displaced_bucket, displaced.tokens);
    queue_.erase(std::prev(queue_.end()));
    waiters_.erase(victim);
  }
  decision.kind = QuotaDecision::Kind::kQueued;
  decision.ticket = next_ticket_++;
  queue_.insert({static_cast<int>(priority), decision.ticket});
  waiters_.emplace(decision.ticket, Waiter{tenant, tokens, priority});
  return decision;
}

QuotaDecision QuotaLedger::Poll(uint64_t ticket, TimePoint now) {
  std::lock_guard<std::mutex> lock(mutex_);
  QuotaDecision decision;
  if (auto displaced = displaced_.find(ticket); displaced != displaced_.end()) {
    decision.kind = QuotaDecision::Kind::kRejected;
    decision.retry_after = displaced->second;
    displaced_.erase(displaced);
    return decision;
  }
  auto it = waiters_.find(ticket);
  if (it == waiters_.end()) {
    decision.kind = QuotaDecision::Kind::kRejected;
    decision.retry_after = std::chrono::seconds(1);
    return decision;
  }
  const Waiter waiter = it->second;
  Bucket* bucket = BucketOf(waiter.tenant);
  if (bucket != nullptr) Refill(*bucket, now);
  // A tenant that became unlimited, or was removed, while its requests waited lets them go.
  const int64_t needed = bucket == nullptr ? 0 : Clamp(*bucket, waiter.tokens);
  if (bucket == nullptr ||
      (FirstOfTenant(ticket, waiter) && bucket->available >= static_cast<double>(needed))) {
    if (bucket != nullptr) bucket->available -= static_cast<double>(needed);
    queue_.erase({static_cast<int>(waiter.priority), ticket});
    waiters_.erase(it);
    return decision;
  }
  decision.kind = QuotaDecision::Kind::kQueued;
  decision.ticket = ticket;
  return decision;
}

Duration QuotaLedger::Abandon(uint64_t ticket, TimePoint now) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto displaced = displaced_.find(ticket); displaced != displaced_.end()) {
    const Duration retry = displaced->second;
    displaced_.erase(displaced);
    return retry;
  }
  auto it = waiters_.find(ticket);
  if (it == waiters_.end()) return std::chrono::seconds(1);
  Duration retry = std::chrono::seconds(1);
  if (Bucket* bucket = BucketOf(it->second.tenant); bucket != nullptr) {
    Refill(*bucket, now);
    retry = RetryAfter(*bucket, it->second.tokens);
  }
  queue_.erase({static_cast<int>(it->second.priority), ticket});
  waiters_.erase(it);
  return retry;
}

void QuotaLedger::Settle(uint64_t tenant, int64_t reserved, int64_t used, TimePoint now) {
  std::lock_guard<std::mutex> lock(mutex_);
  Bucket* limited = BucketOf(tenant);
  if (limited == nullptr) return;
  Bucket& bucket = *limited;
  Refill(bucket, now);
  bucket.available += static_cast<double>(Clamp(bucket, reserved) - used);
  bucket.available = std::min(bucket.available, static_cast<double>(bucket.capacity));
}

int64_t QuotaLedger::Available(uint64_t tenant, TimePoint now) {
  std::lock_guard<std::mutex> lock(mutex_);
  Bucket* limited = BucketOf(tenant);
  if (limited == nullptr) return std::numeric_limits<int64_t>::max();
  Bucket& bucket = *limited;
  Refill(bucket, now);
  return static_cast<int64_t>(std::floor(bucket.available));
}

int64_t QuotaLedger::Queued() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(queue_.size());
}

}  // namespace strata::gateway
