#include "gateway/token_quota.h"

#include <gtest/gtest.h>

#include <limits>

namespace strata::gateway {
namespace {

using Kind = QuotaDecision::Kind;
using std::chrono::seconds;

std::vector<TenantConfig> Tenants() {
  return {{"a", {"ka"}, 600, PriorityClass::kStandard},
          {"b", {"kb"}, 600, PriorityClass::kStandard},
          {"free", {"kf"}, 0, PriorityClass::kStandard}};
}

TEST(QuotaLedgerTest, ReservesThenQueuesThenAdmitsAfterRefill) {
  FakeClock clock;
  QuotaLedger ledger(Tenants(), 10, clock.Now());
  EXPECT_EQ(ledger.Request(0, 500, PriorityClass::kStandard, clock.Now()).kind, Kind::kAdmitted);
  QuotaDecision queued = ledger.Request(0, 200, PriorityClass::kStandard, clock.Now());
  ASSERT_EQ(queued.kind, Kind::kQueued);
  EXPECT_EQ(ledger.Poll(queued.ticket, clock.Now()).kind, Kind::kQueued);
  clock.Advance(seconds(10));  // 600/min = 10/s: 100 + 100 = 200
  EXPECT_EQ(ledger.Poll(queued.ticket, clock.Now()).kind, Kind::kAdmitted);
  EXPECT_EQ(ledger.Available(0, clock.Now()), 0);
  // Other tenants and unlimited ones are unaffected.
  EXPECT_EQ(ledger.Request(1, 600, PriorityClass::kStandard, clock.Now()).kind, Kind::kAdmitted);
  EXPECT_EQ(ledger.Request(2, 1'000'000, PriorityClass::kStandard, clock.Now()).kind,
            Kind::kAdmitted);
}

TEST(QuotaLedgerTest, SettleReturnsUnusedTokensAndChargesOverruns) {
  FakeClock clock;
  QuotaLedger ledger(Tenants(), 10, clock.Now());
  ASSERT_EQ(ledger.Request(0, 300, PriorityClass::kStandard, clock.Now()).kind, Kind::kAdmitted);
  ledger.Settle(0, 300, 100, clock.Now());
  EXPECT_EQ(ledger.Available(0, clock.Now()), 500);
  ASSERT_EQ(ledger.Request(0, 100, PriorityClass::kStandard, clock.Now()).kind, Kind::kAdmitted);
  ledger.Settle(0, 100, 700, clock.Now());
  EXPECT_EQ(ledger.Available(0, clock.Now()), -200);
}

TEST(QuotaLedgerTest, NewcomersDoNotOvertakeWaitersAndPriorityGoesFirst) {
  FakeClock clock;
  QuotaLedger ledger(Tenants(), 10, clock.Now());
  ASSERT_EQ(ledger.Request(0, 600, PriorityClass::kStandard, clock.Now()).kind, Kind::kAdmitted);
  QuotaDecision standard = ledger.Request(0, 100, PriorityClass::kStandard, clock.Now());
  QuotaDecision critical = ledger.Request(0, 100, PriorityClass::kCritical, clock.Now());
  ASSERT_EQ(standard.kind, Kind::kQueued);
  ASSERT_EQ(critical.kind, Kind::kQueued);
  clock.Advance(seconds(10));
  EXPECT_EQ(ledger.Poll(standard.ticket, clock.Now()).kind, Kind::kQueued);
  EXPECT_EQ(ledger.Poll(critical.ticket, clock.Now()).kind, Kind::kAdmitted);
  // A small newcomer queues behind the waiter even though it would fit later.
  clock.Advance(seconds(10));
  EXPECT_EQ(ledger.Request(0, 1, PriorityClass::kStandard, clock.Now()).kind, Kind::kQueued);
  EXPECT_EQ(ledger.Poll(standard.ticket, clock.Now()).kind, Kind::kAdmitted);
}

TEST(QuotaLedgerTest, BoundedQueueRejectsOrDisplacesTheLeastImportant) {
  FakeClock clock;
  QuotaLedger ledger(Tenants(), 2, clock.Now());
  ASSERT_EQ(ledger.Request(0, 600, PriorityClass::kStandard, clock.Now()).kind, Kind::kAdmitted);
  QuotaDecision sheddable = ledger.Request(0, 60, PriorityClass::kSheddable, clock.Now());
  QuotaDecision standard = ledger.Request(0, 60, PriorityClass::kStandard, clock.Now());
  ASSERT_EQ(sheddable.kind, Kind::kQueued);
  ASSERT_EQ(standard.kind, Kind::kQueued);
  QuotaDecision rejected = ledger.Request(0, 60, PriorityClass::kSheddable, clock.Now());
  EXPECT_EQ(rejected.kind, Kind::kRejected);
  EXPECT_EQ(rejected.retry_after, seconds(6));
  QuotaDecision critical = ledger.Request(0, 60, PriorityClass::kCritical, clock.Now());
  EXPECT_EQ(critical.kind, Kind::kQueued);
  EXPECT_EQ(ledger.Poll(sheddable.ticket, clock.Now()).kind, Kind::kRejected);
  EXPECT_EQ(ledger.Queued(), 2);
  EXPECT_GE(ledger.Abandon(standard.ticket, clock.Now()), seconds(1));
  EXPECT_EQ(ledger.Queued(), 1);
}

TEST(QuotaLedgerTest, AChangedQuotaKeepsTheTokensHeldUpToTheNewSize) {
  FakeClock clock;
  QuotaLedger ledger(Tenants(), 10, clock.Now());
  ASSERT_EQ(ledger.Request(0, 100, PriorityClass::kStandard, clock.Now()).kind, Kind::kAdmitted);
  // 500 held: a larger quota refills from there, at its own rate, not from a fresh bucket.
  ledger.SetQuota(0, 6000, clock.Now());
  EXPECT_EQ(ledger.Available(0, clock.Now()), 500);
  clock.Advance(seconds(1));  // 6000/min = 100/s
  EXPECT_EQ(ledger.Available(0, clock.Now()), 600);
  // A smaller quota caps what is held.
  ledger.SetQuota(0, 60, clock.Now());
  EXPECT_EQ(ledger.Available(0, clock.Now()), 60);
  EXPECT_EQ(ledger.Request(0, 61, PriorityClass::kStandard, clock.Now()).kind, Kind::kAdmitted);
  EXPECT_EQ(ledger.Request(0, 1, PriorityClass::kStandard, clock.Now()).kind, Kind::kQueued);
  // A new tenant's bucket starts full.
  ledger.SetQuota(7, 60, clock.Now());
  EXPECT_EQ(ledger.Available(7, clock.Now()), 60);
}

TEST(QuotaLedgerTest, WaitersOfATenantMadeUnlimitedOrForgottenAreLetThrough) {
  FakeClock clock;
  QuotaLedger ledger(Tenants(), 10, clock.Now());
  ASSERT_EQ(ledger.Request(0, 600, PriorityClass::kStandard, clock.Now()).kind, Kind::kAdmitted);
  ASSERT_EQ(ledger.Request(1, 600, PriorityClass::kStandard, clock.Now()).kind, Kind::kAdmitted);
  QuotaDecision a = ledger.Request(0, 100, PriorityClass::kStandard, clock.Now());
  QuotaDecision b = ledger.Request(1, 100, PriorityClass::kStandard, clock.Now());
  ASSERT_EQ(a.kind, Kind::kQueued);
  ASSERT_EQ(b.kind, Kind::kQueued);
  ledger.SetQuota(0, 0, clock.Now());
  ledger.Forget(1);
  EXPECT_EQ(ledger.Poll(a.ticket, clock.Now()).kind, Kind::kAdmitted);
  EXPECT_EQ(ledger.Poll(b.ticket, clock.Now()).kind, Kind::kAdmitted);
  EXPECT_EQ(ledger.Queued(), 0);
  // Without a bucket, nothing is counted: settling is harmless, requests pass.
  ledger.Settle(1, 100, 5000, clock.Now());
  EXPECT_EQ(ledger.Available(1, clock.Now()), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ledger.Request(1, 1'000'000, PriorityClass::kStandard, clock.Now()).kind,
            Kind::kAdmitted);
}

TEST(QuotaLedgerTest, ADisplacedWaiterOfAForgottenTenantIsToldToRetrySoon) {
  FakeClock clock;
  QuotaLedger ledger(Tenants(), 1, clock.Now());
  ASSERT_EQ(ledger.Request(0, 600, PriorityClass::kStandard, clock.Now()).kind, Kind::kAdmitted);
  QuotaDecision sheddable = ledger.Request(0, 60, PriorityClass::kSheddable, clock.Now());
  ASSERT_EQ(sheddable.kind, Kind::kQueued);
  ledger.Forget(0);
  ASSERT_EQ(ledger.Request(1, 600, PriorityClass::kStandard, clock.Now()).kind, Kind::kAdmitted);
  EXPECT_EQ(ledger.Request(1, 60, PriorityClass::kCritical, clock.Now()).kind, Kind::kQueued);
  QuotaDecision displaced = ledger.Poll(sheddable.ticket, clock.Now());
  EXPECT_EQ(displaced.kind, Kind::kRejected);
  EXPECT_EQ(displaced.retry_after, seconds(1));
}

}  // namespace
}  // namespace strata::gateway
