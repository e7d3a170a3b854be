#include "sim/philly_replay.h"

#include <gtest/gtest.h>

#include <tuple>

namespace strata::sim {
namespace {

const TimePoint kStart = TimePoint(std::chrono::seconds(1504483200));

PhillyJob Job(std::string cluster, int at_s, int gpus, double duration_s) {
  return {kStart + std::chrono::seconds(at_s), duration_s, gpus, std::move(cluster)};
}

PhillyReport Replay(const std::vector<PhillyJob>& jobs, int gpus, PhillyPolicy policy) {
  const auto report = ReplayPhilly(jobs, {.gpus = gpus, .policy = policy});
  EXPECT_TRUE(report.has_value()) << report.error().message();
  return report.value_or(PhillyReport{});
}

TEST(PhillyReplayTest, ProgressIsReportedAtEachInstantJobsArrive) {
  std::vector<std::tuple<size_t, size_t, Duration>> calls;
  PhillyReplayOptions options{.gpus = 16};
  options.progress = [&](size_t arrived, size_t total, Duration elapsed) {
    calls.emplace_back(arrived, total, elapsed);
  };
  ASSERT_TRUE(
      ReplayPhilly({Job("a", 0, 8, 100), Job("a", 0, 8, 100), Job("b", 500, 8, 100)}, options));
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], std::make_tuple(size_t{2}, size_t{3}, Duration::zero()));
  EXPECT_EQ(calls[1], std::make_tuple(size_t{3}, size_t{3}, Duration(std::chrono::seconds(500))));
}

// Two 8-GPU jobs of queue a at t=0 and one of queue b much later: equal GPU-time, so 8 GPUs of
// quota each. With borrowing a runs both at once on b's idle quota; strictly it runs them in turn.
TEST(PhillyReplayTest, BorrowingLetsAQueueUseIdleQuota) {
  const std::vector<PhillyJob> jobs = {Job("a", 0, 8, 1000), Job("a", 0, 8, 1000),
                                       Job("b", 10000, 8, 2000)};
  const PhillyReport strata = Replay(jobs, 16, PhillyPolicy::kStrata);
  EXPECT_DOUBLE_EQ(strata.queues.at("a").quota_gpus, 8);
  EXPECT_DOUBLE_EQ(strata.queues.at("a").queueing.p95_s, 0);
  EXPECT_DOUBLE_EQ(strata.makespan_s, 12000);
  EXPECT_EQ(strata.preemptions, 0);

  const PhillyReport strict = Replay(jobs, 16, PhillyPolicy::kStrict);
  EXPECT_DOUBLE_EQ(strict.queues.at("a").queueing.p95_s, 1000);
  EXPECT_DOUBLE_EQ(strict.queues.at("a").queueing.mean_s, 500);
  EXPECT_DOUBLE_EQ(strict.queues.at("b").queueing.p95_s, 0);
  // Busy GPU-seconds over the 10000 s arrival window: 16000 either way, on 16 GPUs.
  EXPECT_DOUBLE_EQ(strata.utilisation, 0.1);
  EXPECT_DOUBLE_EQ(strict.utilisation, 0.1);
}

// b arrives while a borrows its quota: one of a's jobs is preempted 4200 s into its run, keeps
// the 3600 s up to its last checkpoint and loses 600 s on 8 GPUs; it resumes when a's other job
// ends (7200 s) and finishes its remaining 3600 s at 10800 s.
TEST(PhillyReplayTest, ReclaimPreemptsTheBorrowerAndLosesWorkSinceTheCheckpoint) {
  const std::vector<PhillyJob> jobs = {Job("a", 0, 8, 7200), Job("a", 0, 8, 7200),
                                       Job("b", 4200, 8, 14400)};
  const PhillyReport report = Replay(jobs, 16, PhillyPolicy::kStrata);
  EXPECT_EQ(report.preemptions, 1);
  EXPECT_DOUBLE_EQ(report.lost_gpu_hours, 8 * 600 / 3600.0);
  EXPECT_DOUBLE_EQ(report.queues.at("b").queueing.p95_s, 0);
  EXPECT_DOUBLE_EQ(report.jct.p95_s, 14400);  // b; the preempted a job ends at 10800
  EXPECT_DOUBLE_EQ(report.makespan_s, 4200 + 14400);
  EXPECT_EQ(report.unfinished_jobs, 0);

  const PhillyReport strict = Replay(jobs, 16, PhillyPolicy::kStrict);
  EXPECT_EQ(strict.preemptions, 0);
  EXPECT_DOUBLE_EQ(strict.queues.at("a").queueing.p95_s, 7200);
}

// A big queue's five 8-GPU jobs fill the cluster and queue; a small queue's 1-GPU job arrives
// behind them. FIFO serves the big queue's backlog first (the small job starts at 2001 s, when
// a fourth big job ends); fair sharing serves the small queue, which uses nothing, at the first
// completion (1000 s).
TEST(PhillyReplayTest, FifoLetsABigQueueDelayASmallOne) {
  const std::vector<PhillyJob> jobs = {Job("big", 0, 8, 1000), Job("big", 1, 8, 1000),
                                       Job("big", 2, 8, 1000), Job("big", 3, 8, 1000),
                                       Job("big", 4, 8, 1000), Job("small", 10, 1, 100)};
  const PhillyReport fifo = Replay(jobs, 16, PhillyPolicy::kFifo);
  EXPECT_DOUBLE_EQ(fifo.queues.at("small").queueing.p95_s, 1991);
  const PhillyReport strata = Replay(jobs, 16, PhillyPolicy::kStrata);
  EXPECT_DOUBLE_EQ(strata.queues.at("small").queueing.p95_s, 990);
  EXPECT_EQ(strata.unfinished_jobs, 0);
}

TEST(PhillyReplayTest, JobsThatCannotFitAreCountedNotReplayed) {
  const std::vector<PhillyJob> jobs = {Job("a", 0, 16, 100), Job("a", 0, 4, 100),
                                       Job("b", 0, 4, 100)};
  const PhillyReport report = Replay(jobs, 8, PhillyPolicy::kStrict);
  EXPECT_EQ(report.rejected_jobs, 1);
  EXPECT_EQ(report.jobs, 2);
  EXPECT_EQ(report.unfinished_jobs, 0);
  // A 12-GPU job is a gang of an 8-GPU pod and a 4-GPU pod; a strict 4-GPU quota never admits it.
  const PhillyReport gang = Replay({Job("a", 0, 12, 100), Job("b", 0, 4, 100), Job("b", 0, 4, 200)},
                                   16, PhillyPolicy::kStrict);
  EXPECT_EQ(gang.unfinished_jobs, 1);
  EXPECT_EQ(Replay({Job("a", 0, 12, 100)}, 16, PhillyPolicy::kStrata).unfinished_jobs, 0);
}

TEST(PhillyReplayTest, RejectsBadOptionsAndPolicyNames) {
  const auto bad = ReplayPhilly({Job("a", 0, 1, 1)}, {.gpus = 12});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(), "gpus: 12 is not a positive multiple of 8");
  EXPECT_FALSE(ReplayPhilly({}, {.gpus = 8}).has_value());
  EXPECT_EQ(ParsePhillyPolicy("drf").error().message(),
            "policy 'drf' is not one of strata, fifo, strict");
  EXPECT_EQ(*ParsePhillyPolicy("strict"), PhillyPolicy::kStrict);
}

}  // namespace
}  // namespace strata::sim
