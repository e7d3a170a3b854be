#include "observe/cost_ledger.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

namespace strata::observe {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

// A fresh directory for one test's ledger file, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "cost-ledger-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File() const { return path_ + "/" + kCostLedgerFileName; }

 private:
  std::string path_;
};

PriceTable Prices(double gpu_hour = 2.0) {
  PriceTable prices;
  prices.gpu_hour = {{"H100-80GB", gpu_hour}};
  prices.cpu_core_hour = 0.01;
  prices.memory_gib_hour = 0.001;
  return prices;
}

// A pod of `team` and job `job` holding `gpus` H100s, 1 core and 1 GiB from `start`.
CostPod Pod(std::string name, std::string team, double gpus, TimePoint start,
            std::optional<TimePoint> end = std::nullopt, std::string job = "train") {
  CostPod pod;
  pod.uid = "uid-" + name;
  pod.name = std::move(name);
  pod.namespace_name = "default";
  if (!team.empty()) pod.labels["team"] = std::move(team);
  pod.queue = "research";
  pod.job = std::move(job);
  pod.gpu_model = "H100-80GB";
  pod.gpus = gpus;
  pod.cpu_cores = 1;
  pod.memory_gib = 1;
  pod.start = start;
  pod.end = end;
  return pod;
}

// What one allocation of `gpus` costs per hour at Prices(gpu_hour).
double Rate(double gpus, double gpu_hour = 2.0) { return gpus * gpu_hour + 0.01 + 0.001; }

std::unique_ptr<CostLedger> OpenLedger(const std::string& path, TimePoint now,
                                       const PriceTable& prices = Prices(),
                                       CostLedgerOptions options = {}) {
  Result<std::unique_ptr<CostLedger>> ledger = CostLedger::Open(path, prices, now, options);
  EXPECT_TRUE(ledger) << ledger.error().ToString();
  return ledger ? std::move(*ledger) : nullptr;
}

// The total of each group by `dimension` over [from, to), from the ledger.
std::map<std::string, double> Totals(const CostLedger& ledger, CostDimension dimension,
                                     TimePoint from, TimePoint to) {
  Result<std::vector<CostPod>> pods = ledger.Read(from, to);
  EXPECT_TRUE(pods) << pods.error().ToString();
  std::map<std::string, double> out;
  if (!pods) return out;
  for (const CostLine& line : ComputeCost("USD", *pods, dimension, from, to).lines) {
    out[line.name] = line.total;
  }
  return out;
}

class CostLedgerTest : public ::testing::Test {
 protected:
  TempDir dir_;
  const TimePoint t0_ = *ParseRfc3339("2026-03-04T00:00:00Z");
};

TEST_F(CostLedgerTest, AnOpenRecordAccruesWithoutWritesUntilItsPodEnds) {
  auto ledger = OpenLedger(dir_.File(), t0_);
  ASSERT_TRUE(ledger->Sync({Pod("a", "ml", 2, t0_)}, t0_).ok());
  EXPECT_NEAR(Totals(*ledger, CostDimension::kTeam, t0_, t0_ + hours(3))["ml"], 3 * Rate(2), 1e-9);
  EXPECT_EQ(ledger->Counts()->open, 1);

  // It finished at 01:30 (its own end); the ledger saw it at 02:00.
  ASSERT_TRUE(
      ledger->Sync({Pod("a", "ml", 2, t0_, t0_ + hours(1) + minutes(30))}, t0_ + hours(2)).ok());
  EXPECT_EQ(ledger->Counts()->open, 0);
  EXPECT_EQ(ledger->Counts()->closed, 1);
  EXPECT_NEAR(Totals(*ledger, CostDimension::kTeam, t0_, t0_ + hours(5))["ml"], 1.5 * Rate(2),
              1e-9);
}

TEST_F(CostLedgerTest, ADeletedPodKeepsItsSpendClosedWhenTheLedgerSawItGo) {
  auto ledger = OpenLedger(dir_.File(), t0_);
  ASSERT_TRUE(ledger->Sync({Pod("a", "ml", 1, t0_), Pod("b", "search", 1, t0_)}, t0_).ok());
  // The job of b is deleted: its pod is gone at 02:00.
  ASSERT_TRUE(ledger->Sync({Pod("a", "ml", 1, t0_)}, t0_ + hours(2)).ok());
  const auto later = Totals(*ledger, CostDimension::kTeam, t0_, t0_ + hours(6));
  EXPECT_NEAR(later.at("search"), 2 * Rate(1), 1e-9);
  EXPECT_NEAR(later.at("ml"), 6 * Rate(1), 1e-9);
  // Every dimension keeps it: its job, its pod.
  EXPECT_EQ(Totals(*ledger, CostDimension::kPod, t0_, t0_ + hours(6)).count("default/b"), 1u);
  EXPECT_NEAR(Totals(*ledger, CostDimension::kJob, t0_, t0_ + hours(6))["default/train"],
              8 * Rate(1), 1e-9);
}

TEST_F(CostLedgerTest, AfterACrashItReconcilesWithThePodsThatExist) {
  // A process that records a and b at 00:00 and 01:00, then dies by SIGKILL.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Result<std::unique_ptr<CostLedger>> ledger = CostLedger::Open(dir_.File(), Prices(), t0_);
    if (!ledger) _exit(1);
    std::vector<CostPod> pods = {Pod("a", "ml", 1, t0_), Pod("b", "ml", 1, t0_)};
    if (!(*ledger)->Sync(pods, t0_).ok() || !(*ledger)->Sync(pods, t0_ + hours(1)).ok()) _exit(1);
    raise(SIGKILL);
    _exit(1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;

  // Back at 03:00: a still runs; b was deleted while the plane was down; c was bound at 01:30 and
  // d ran from 01:40 to 02:00, both while it was down.
  const TimePoint restart = t0_ + hours(3);
  auto ledger = OpenLedger(dir_.File(), restart);
  ASSERT_TRUE(ledger
                  ->Sync({Pod("a", "ml", 1, t0_), Pod("c", "ml", 1, t0_ + hours(1) + minutes(30)),
                          Pod("d", "ml", 1, t0_ + hours(1) + minutes(40), t0_ + hours(2))},
                         restart)
                  .ok());
  const auto pods = Totals(*ledger, CostDimension::kPod, t0_, restart);
  EXPECT_NEAR(pods.at("default/a"), 3 * Rate(1), 1e-9);
  // Last seen at 01:00, the last time the ledger saw the cluster before it stopped.
  EXPECT_NEAR(pods.at("default/b"), 1 * Rate(1), 1e-9);
  EXPECT_NEAR(pods.at("default/c"), 1.5 * Rate(1), 1e-9);
  EXPECT_NEAR(pods.at("default/d"), Rate(1) / 3, 1e-9);
  EXPECT_EQ(ledger->Counts()->open, 2);

  // A second Sync changes nothing of the past.
  ASSERT_TRUE(ledger
                  ->Sync({Pod("a", "ml", 1, t0_), Pod("c", "ml", 1, t0_ + hours(1) + minutes(30)),
                          Pod("d", "ml", 1, t0_ + hours(1) + minutes(40), t0_ + hours(2))},
                         restart + minutes(1))
                  .ok());
  EXPECT_EQ(Totals(*ledger, CostDimension::kPod, t0_, restart), pods);
  EXPECT_EQ(ledger->Counts()->closed, 2);
}

TEST_F(CostLedgerTest, ANewPriceTableChargesFromItsStartAndDoesNotRepriceThePast) {
  {
    auto ledger = OpenLedger(dir_.File(), t0_, Prices(2.0));
    ASSERT_TRUE(ledger->Sync({Pod("a", "ml", 1, t0_)}, t0_).ok());
  }
  // Restarted at 02:00 with GPUs at 3.00 an hour.
  auto ledger = OpenLedger(dir_.File(), t0_ + hours(2), Prices(3.0));
  ASSERT_TRUE(ledger->Sync({Pod("a", "ml", 1, t0_)}, t0_ + hours(2)).ok());
  EXPECT_NEAR(Totals(*ledger, CostDimension::kTeam, t0_, t0_ + hours(4))["ml"],
              2 * Rate(1, 2.0) + 2 * Rate(1, 3.0), 1e-9);
  EXPECT_EQ(ledger->Counts()->open, 1);
  EXPECT_EQ(ledger->Counts()->closed, 1);
}

TEST_F(CostLedgerTest, OldRecordsRollUpIntoHoursWithTheSameTotals) {
  CostLedgerOptions options;
  options.raw_retention = hours(24);
  auto ledger = OpenLedger(dir_.File(), t0_, Prices(), options);
  const CostPod done = Pod("a", "ml", 1, t0_ + minutes(30), t0_ + hours(2) + minutes(15));
  CostPod other = Pod("b", "search", 4, t0_ + hours(1), t0_ + hours(3), "serve");
  other.service = "llm";
  ASSERT_TRUE(ledger->Sync({done, other}, t0_ + hours(4)).ok());
  const TimePoint end = t0_ + hours(6);
  const auto by_team = Totals(*ledger, CostDimension::kTeam, t0_, end);
  const auto by_service = Totals(*ledger, CostDimension::kService, t0_, end);
  // A window that starts inside a rolled-up hour gets its part of that hour.
  const auto partial = Totals(*ledger, CostDimension::kTeam, t0_ + hours(1), end);

  // Two days later the records are rolled up; the finished pod is still in the cluster.
  ASSERT_TRUE(ledger->Sync({done}, t0_ + hours(48)).ok());
  Result<CostLedgerCounts> counts = ledger->Counts();
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->closed, 0);
  EXPECT_EQ(counts->rolled_up_hours, 3 + 2);  // ml: 00, 01, 02; search: 01, 02
  const auto after = Totals(*ledger, CostDimension::kTeam, t0_, end);
  EXPECT_NEAR(after.at("ml"), by_team.at("ml"), 1e-9);
  EXPECT_NEAR(after.at("search"), by_team.at("search"), 1e-9);
  EXPECT_NEAR(Totals(*ledger, CostDimension::kService, t0_, end).at("llm"), by_service.at("llm"),
              1e-9);
  // Hours are whole: a window from 01:00 gets all of the hours from 01:00.
  EXPECT_NEAR(Totals(*ledger, CostDimension::kTeam, t0_ + hours(1), end).at("ml"), partial.at("ml"),
              1e-9);
  // Job and pod detail is gone: the spend is kept under __rolled_up__.
  const auto by_job = Totals(*ledger, CostDimension::kJob, t0_, end);
  EXPECT_EQ(by_job.size(), 1u);
  EXPECT_NEAR(by_job.at(std::string(kRolledUp)), by_team.at("ml") + by_team.at("search"), 1e-9);

  // Reopened, the finished pod still in the cluster is not recorded a second time.
  ledger.reset();
  ledger = OpenLedger(dir_.File(), t0_ + hours(49), Prices(), options);
  ASSERT_TRUE(ledger->Sync({done}, t0_ + hours(49)).ok());
  EXPECT_EQ(ledger->Counts()->closed, 0);
  EXPECT_NEAR(Totals(*ledger, CostDimension::kTeam, t0_, end).at("ml"), by_team.at("ml"), 1e-9);
}

TEST_F(CostLedgerTest, TheFileStopsGrowingAt10000PodsChurnedADay) {
  // 10,000 pods a day, each bound for 30 minutes and deleted 10 minutes after it ends, in 5
  // teams; the ledger syncs every 10 minutes. Retentions shortened so that both bounds are
  // reached within the simulated days.
  CostLedgerOptions options;
  options.raw_retention = hours(24);
  options.rollup_retention = hours(24 * 3);
  auto ledger = OpenLedger(dir_.File(), t0_, Prices(), options);
  constexpr int kPerSync = 10000 / 144;  // pods bound per 10 minutes
  std::vector<CostPod> live;
  int next = 0;
  std::map<int, CostLedgerCounts> by_day;
  for (TimePoint now = t0_; now <= t0_ + hours(24 * 8); now += minutes(10)) {
    std::vector<CostPod> cluster;
    for (CostPod& pod : live) {
      if (!pod.end && now - pod.start >= minutes(30)) pod.end = pod.start + minutes(30);
      if (pod.end && now - *pod.end >= minutes(10)) continue;  // deleted
      cluster.push_back(pod);
    }
    for (int i = 0; i < kPerSync; ++i, ++next) {
      cluster.push_back(Pod("p" + std::to_string(next), "team-" + std::to_string(next % 5), 1, now,
                            std::nullopt, "job-" + std::to_string(next)));
    }
    live = cluster;
    ASSERT_TRUE(ledger->Sync(cluster, now).ok());
    if ((now - t0_) % hours(24) == Duration::zero()) {
      Result<CostLedgerCounts> counts = ledger->Counts();
      ASSERT_TRUE(counts);
      by_day[static_cast<int>((now - t0_) / hours(24))] = *counts;
    }
  }
  // Raw records: a day's worth and the pods that run; hours: 3 days x 24 x 5 teams at most.
  for (int day : {5, 6, 7, 8}) {
    EXPECT_LE(by_day[day].closed, 10000 + 2 * kPerSync * 6) << day;
    EXPECT_LE(by_day[day].rolled_up_hours, 24 * 4 * 5) << day;
  }
  // Freed pages are reused: the file after day 8 is within 10% of its size after day 5 (slack
  // for where the rows fell in the pages).
  EXPECT_LE(by_day[8].file_bytes, by_day[5].file_bytes * 11 / 10)
      << by_day[5].file_bytes << " -> " << by_day[8].file_bytes;
  std::cout << "cost ledger after 5 days: " << by_day[5].closed << " records, "
            << by_day[5].rolled_up_hours << " hours, " << by_day[5].file_bytes
            << " bytes; after 8 days: " << by_day[8].closed << " records, "
            << by_day[8].rolled_up_hours << " hours, " << by_day[8].file_bytes << " bytes\n";
}

TEST_F(CostLedgerTest, TheFileIsItsOwnersOnly) {
  auto ledger = OpenLedger(dir_.File(), t0_);
  ASSERT_TRUE(ledger->Sync({Pod("a", "ml", 1, t0_)}, t0_).ok());
  for (const std::string& file : {dir_.File(), dir_.File() + "-wal"}) {
    std::filesystem::perms perms = std::filesystem::status(file).permissions();
    EXPECT_EQ(perms & std::filesystem::perms::all,
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write)
        << file;
  }
}

TEST_F(CostLedgerTest, AFileThatIsNotALedgerIsRefusedNamingIt) {
  { std::ofstream(dir_.File()) << "not a database, not at all: just some text"; }
  Result<std::unique_ptr<CostLedger>> ledger = CostLedger::Open(dir_.File(), Prices(), t0_);
  ASSERT_FALSE(ledger);
  EXPECT_THAT(ledger.error().message(), ::testing::HasSubstr(dir_.File()));
}

}  // namespace
}  // namespace strata::observe
