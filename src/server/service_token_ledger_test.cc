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
  std::map<std::string, double> hour = ledger.Over(hours(1));
  EXPECT_DOUBLE_EQ(hour["chat"], 900);
  EXPECT_DOUBLE_EQ(hour["code"], 80);  // absent an hour ago: all of its total
  std::map<std::string, double> half = ledger.Over(minutes(30));
  EXPECT_DOUBLE_EQ(half["chat"], 600);
  EXPECT_DOUBLE_EQ(half["code"], 30);
  // A window reaching back before the first record counts everything since the gateway began.
  EXPECT_DOUBLE_EQ(ledger.Over(hours(24))["chat"], 1000);
}

TEST(ServiceTokenLedgerTest, ARestartedCounterCountsFromZero) {
  ServiceTokenLedger ledger(minutes(1));
  const TimePoint start = TimePoint{} + hours(1000);
  ledger.Record(start, {{"chat", 500}});
  ledger.Record(start + minutes(10), {{"chat", 40}});
  EXPECT_DOUBLE_EQ(ledger.Over(minutes(10))["chat"], 40);
}

TEST(ServiceTokenLedgerTest, EmptyBeforeAnyRecord) {
  ServiceTokenLedger ledger;
  EXPECT_TRUE(ledger.Over(hours(24)).empty());
}

}  // namespace
}  // namespace strata::server
