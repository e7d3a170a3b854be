#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "gateway/config.h"

namespace strata::gateway {

// The answer to a quota request or poll.
struct QuotaDecision {
  enum class Kind {
    kAdmitted,  // tokens reserved: proceed, and Settle at the end
    kQueued,    // wait, then Poll with `ticket`
    kRejected,  // answer 429 with Retry-After `retry_after`
  };
  Kind kind = Kind::kAdmitted;
  uint64_t ticket = 0;
  Duration retry_after{};
};

// Token-per-minute quotas of every tenant, with one bounded, fair waiting queue.
//
// Each limited tenant has a token bucket holding at most tokens_per_minute, refilled
// continuously. A request reserves its estimate at admission (capped at the bucket size so a
// large request can still pass when the bucket is full) and settles its real usage at the end;
// a bucket may go into debt when usage exceeds the estimate, which later requests wait out.
// When the bucket is short, the request queues: within a tenant, waiters are served in
// (priority class, arrival) order and newcomers never overtake them; across the gateway at most
// `max_queued` wait, and when full a newcomer displaces the least important, newest waiter if
// it is more important than that waiter, else it is rejected at once.
//
// Tenants are known by an id of the caller's (GatewayServer's tenant table). A tenant with no
// bucket, because it is unlimited, was never given a quota or has been forgotten, is admitted at
// once and settles nothing; so is a waiter whose tenant lost its bucket while it waited.
//
// Shared by every event loop of the gateway. Thread-safe: a short mutex section per call (no
// I/O under it). Time comes from the caller, so tests drive it with a FakeClock.
class QuotaLedger {
 public:
  explicit QuotaLedger(int64_t max_queued) : max_queued_(max_queued) {}
  // With the quota of each of `tenants`, tenant i's id being i.
  QuotaLedger(const std::vector<TenantConfig>& tenants, int64_t max_queued, TimePoint now);

  // Sets tenant `tenant`'s quota to `tokens_per_minute` (0: unlimited, its bucket dropped). A
  // new bucket starts full; a bucket kept keeps the tokens it holds (its debt too), refilled at
  // the old rate until `now` and then capped at the new size, and its waiters stay queued.
  void SetQuota(uint64_t tenant, int64_t tokens_per_minute, TimePoint now);

  // Drops tenant `tenant`'s bucket (the tenant was removed): as SetQuota(tenant, 0, now).
  void Forget(uint64_t tenant) { SetQuota(tenant, 0, TimePoint{}); }

  // Asks for `tokens` for tenant `tenant`.
  QuotaDecision Request(uint64_t tenant, int64_t tokens, PriorityClass priority, TimePoint now);

  // The state of a queued `ticket`: admitted (tokens now reserved, ticket consumed), still
  // queued, or rejected because a more important request displaced it (ticket consumed).
  QuotaDecision Poll(uint64_t ticket, TimePoint now);

  // Gives up a queued ticket (its wait timed out or its client left). Returns how long the
  // client should wait before retrying.
  Duration Abandon(uint64_t ticket, TimePoint now);

  // Replaces the reservation of `reserved` tokens with the `used` ones.
  void Settle(uint64_t tenant, int64_t reserved, int64_t used, TimePoint now);

  // Tokens in the tenant's bucket now (negative in debt); INT64_MAX when unlimited.
  int64_t Available(uint64_t tenant, TimePoint now);

  // Requests waiting across all tenants.
  int64_t Queued() const;

 private:
  struct Bucket {
    int64_t capacity = 0;  // > 0
    double available = 0;
    TimePoint refilled_at{};
  };
  struct Waiter {
    uint64_t tenant;
    int64_t tokens;
    PriorityClass priority;
  };
  // Orders waiters: more important first, then by arrival (tickets increase).
  using QueueKey = std::pair<int, uint64_t>;

  void Refill(Bucket& bucket, TimePoint now) const;
  int64_t Clamp(const Bucket& bucket, int64_t tokens) const;
  Duration RetryAfter(const Bucket& bucket, int64_t tokens) const;
  // The tenant's bucket, or null when it has none (unlimited).
  Bucket* BucketOf(uint64_t tenant);
  // True when `ticket` is the first waiter of its tenant.
  bool FirstOfTenant(uint64_t ticket, const Waiter& waiter) const;

  const int64_t max_queued_;
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, Bucket> buckets_;  // limited tenants only
  uint64_t next_ticket_ = 1;
  std::set<QueueKey> queue_;
  std::unordered_map<uint64_t, Waiter> waiters_;
  std::unordered_map<uint64_t, Duration> displaced_;  // ticket -> retry-after
};

}  // namespace strata::gateway
