#include "server/service_token_ledger.h"

#include <gtest/gtest.h>

namespace strata::server {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

TEST(ServiceTokenLedgerTest, TokensOverAWindowAreTheGrowthOfTheTotals) {
  ServiceTokenLedger ledger(minutes(1));
  const TimePoint start = TimePoint{} + hours(1000);
  ledger.Record(start, {{"chat", 100}});
  ledger.Record(start + minutes(30), {{"chat", 400}, {"code", 50}});
  ledger.Record(start + minutes(60), {{"chat", 1000}, {"code", 80}});
  const TimePoint end = start + minutes(60);
  std::map<std::string, double> hour = ledger.Between(end - hours(1), end);
  EXPECT_DOUBLE_EQ(hour["chat"], 900);
  EXPECT_DOUBLE_EQ(hour["code"], 80);  // absent an hour ago: all of its total
  std::map<std::string, double> half = ledger.Between(end - minutes(30), end);
  EXPECT_DOUBLE_EQ(half["chat"], 600);
  EXPECT_DOUBLE_EQ(half["code"], 30);
  // A window reaching back before the first record counts everything since the gateway began.
  EXPECT_DOUBLE_EQ(ledger.Between(end - hours(24), end)["chat"], 1000);
  // A step in the past: the growth between the samples that bound it.
  std::map<std::string, double> first_half = ledger.Between(start, start + minutes(30));
  EXPECT_DOUBLE_EQ(first_half["chat"], 300);
  EXPECT_DOUBLE_EQ(first_half["code"], 50);
  // A step after the latest record saw nothing more.
  EXPECT_DOUBLE_EQ(ledger.Between(end + minutes(5), end + minutes(10))["chat"], 0);
}

TEST(ServiceTokenLedgerTest, ARestartedCounterCountsFromZero) {
  ServiceTokenLedger ledger(minutes(1));
  const TimePoint start = TimePoint{} + hours(1000);
  ledger.Record(start, {{"chat", 500}});
  ledger.Record(start + minutes(10), {{"chat", 40}});
  EXPECT_DOUBLE_EQ(ledger.Between(start, start + minutes(10))["chat"], 40);
}

TEST(ServiceTokenLedgerTest, EmptyBeforeAnyRecord) {
  ServiceTokenLedger ledger;
  const TimePoint now = TimePoint{} + hours(1000);
  EXPECT_TRUE(ledger.Between(now - hours(24), now).empty());
}

}  // namespace
}  // namespace strata::server
