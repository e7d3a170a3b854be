#include "server/service_token_ledger.h"

#include <gtest/gtest.h>

#include "node/test_support.h"

namespace strata::server {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

const TimePoint kStart = TimePoint{} + hours(1000);  // on the hour

TEST(ServiceTokenLedgerTest, EachMinuteHoldsTheGrowthOfTheTotals) {
  ServiceTokenLedger ledger;
  ledger.Record(kStart, {{"chat", 100}});  // all it served since the gateway began
  ledger.Record(kStart + minutes(30), {{"chat", 400}, {"code", 50}});
  ledger.Record(kStart + minutes(60), {{"chat", 1000}, {"code", 80}});
  std::map<std::string, double> first_hour = ledger.Between(kStart, kStart + minutes(60));
  EXPECT_DOUBLE_EQ(first_hour["chat"], 400);
  EXPECT_DOUBLE_EQ(first_hour["code"], 50);
  // A window counts the minutes that start in it: the one in progress too.
  std::map<std::string, double> all = ledger.Between(kStart, kStart + minutes(61));
  EXPECT_DOUBLE_EQ(all["chat"], 1000);
  EXPECT_DOUBLE_EQ(all["code"], 80);
  std::map<std::string, double> later = ledger.Between(kStart + minutes(30), kStart + minutes(61));
  EXPECT_DOUBLE_EQ(later["chat"], 900);
  EXPECT_DOUBLE_EQ(later["code"], 80);
  EXPECT_TRUE(ledger.Between(kStart + minutes(61), kStart + minutes(70)).empty());
}

TEST(ServiceTokenLedgerTest, ARestartedCounterCountsFromZero) {
  ServiceTokenLedger ledger;
  ledger.Record(kStart, {{"chat", 500}});
  ledger.Record(kStart + minutes(10), {{"chat", 40}});
  EXPECT_DOUBLE_EQ(ledger.Between(kStart + minutes(1), kStart + minutes(11))["chat"], 40);
}

TEST(ServiceTokenLedgerTest, EmptyBeforeAnyRecord) {
  ServiceTokenLedger ledger;
  EXPECT_TRUE(ledger.Between(kStart - hours(24), kStart).empty());
}

// With the cost ledger, finished minutes outlive the process: a new ledger over the same file
// (a restarted control plane, its gateway counting from zero again) reads them and adds its own.
TEST(ServiceTokenLedgerTest, FinishedMinutesSurviveARestartInTheCostLedger) {
  node::testing::TempDir dir;
  const std::string path = dir.File("cost-ledger.db");
  {
    Result<std::unique_ptr<observe::CostLedger>> file =
        observe::CostLedger::Open(path, observe::PriceTable{}, kStart);
    ASSERT_TRUE(file) << file.error().ToString();
    ServiceTokenLedger ledger;
    ledger.Persist(std::move(*file));
    ledger.Record(kStart, {{"chat", 100}});
    ledger.Record(kStart + minutes(5), {{"chat", 300}});
    ledger.Record(kStart + minutes(6), {{"chat", 350}});  // minute 6 is lost with the process
    EXPECT_DOUBLE_EQ(ledger.Between(kStart, kStart + hours(1))["chat"], 350);
  }
  Result<std::unique_ptr<observe::CostLedger>> file =
      observe::CostLedger::Open(path, observe::PriceTable{}, kStart + minutes(10));
  ASSERT_TRUE(file) << file.error().ToString();
  ServiceTokenLedger restarted;
  restarted.Persist(std::move(*file));
  EXPECT_DOUBLE_EQ(restarted.Between(kStart, kStart + hours(1))["chat"], 300);
  restarted.Record(kStart + minutes(10), {{"chat", 20}});
  EXPECT_DOUBLE_EQ(restarted.Between(kStart, kStart + hours(1))["chat"], 320);
  EXPECT_DOUBLE_EQ(restarted.Between(kStart + minutes(5), kStart + minutes(6))["chat"], 200);
}

}  // namespace
}  // namespace strata::server
