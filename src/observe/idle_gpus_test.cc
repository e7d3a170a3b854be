#include "observe/idle_gpus.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::observe {
namespace {

using std::chrono::minutes;
using ::testing::HasSubstr;

GpuSample Gpu(int64_t index, std::string job, double utilization, bool running = true) {
  GpuSample sample;
  sample.hostname = "n0";
  sample.gpu = index;
  sample.reading.utilization_percent = utilization;
  if (!job.empty()) {
    GpuHolder holder;
    holder.pod = job + "-0";
    holder.namespace_name = "team-a";
    holder.job = std::move(job);
    holder.queue = "research";
    holder.running = running;
    sample.holders = {holder};
  }
  return sample;
}

TEST(ParseIdlePolicyTest, DefaultsAndAnnotations) {
  Result<IdlePolicy> defaults = ParseIdlePolicy({});
  ASSERT_TRUE(defaults);
  EXPECT_DOUBLE_EQ(defaults->threshold, 0.30);
  EXPECT_EQ(defaults->idle_after, minutes(30));
  EXPECT_FALSE(defaults->reclaimable);
  Result<IdlePolicy> set = ParseIdlePolicy({{api::kIdleThresholdAnnotation, "10%"},
                                            {api::kIdleAfterAnnotation, "2h"},
                                            {api::kIdleReclaimAnnotation, "true"}});
  ASSERT_TRUE(set) << set.error().ToString();
  EXPECT_DOUBLE_EQ(set->threshold, 0.10);
  EXPECT_EQ(set->idle_after, minutes(120));
  EXPECT_TRUE(set->reclaimable);
  EXPECT_DOUBLE_EQ(ParseIdlePolicy({{api::kIdleThresholdAnnotation, "0.5"}})->threshold, 0.5);
}

TEST(ParseIdlePolicyTest, BadValuesNameTheAnnotation) {
  auto error = [](const char* name, const char* value) {
    Result<IdlePolicy> policy = ParseIdlePolicy({{name, value}});
    EXPECT_FALSE(policy) << name << "=" << value;
    return policy ? std::string() : policy.error().message();
  };
  EXPECT_THAT(error(api::kIdleThresholdAnnotation, "150%"),
              HasSubstr("strata.dev/idle-threshold: \"150%\""));
  EXPECT_THAT(error(api::kIdleThresholdAnnotation, "low"), HasSubstr("idle-threshold"));
  EXPECT_THAT(error(api::kIdleThresholdAnnotation, ""), HasSubstr("idle-threshold"));
  EXPECT_THAT(error(api::kIdleAfterAnnotation, "soon"),
              HasSubstr("strata.dev/idle-after: \"soon\""));
  EXPECT_THAT(error(api::kIdleAfterAnnotation, "0s"), HasSubstr("positive"));
  EXPECT_THAT(error(api::kIdleReclaimAnnotation, "yes"), HasSubstr("strata.dev/idle-reclaim"));
}

TEST(JobGpuUsesTest, RunningJobsWithKnownUtilisation) {
  std::vector<JobGpuUse> uses =
      JobGpuUses({Gpu(0, "train", 20), Gpu(1, "train", 10), Gpu(2, "starting", 0, false),
                  Gpu(3, "blind", GpuReading::kUnknown), Gpu(4, "", 50)});
  ASSERT_EQ(uses.size(), 1u);
  EXPECT_EQ(uses[0].job, "train");
  EXPECT_EQ(uses[0].queue, "research");
  EXPECT_DOUBLE_EQ(uses[0].gpus, 2);
  EXPECT_DOUBLE_EQ(uses[0].busy, 0.3);
}

TEST(IdleJobTrackerTest, ReportsOnceAfterTheQueuesIdleTimeAndStartsOverWhenBusy) {
  IdlePolicy policy;
  policy.idle_after = minutes(30);
  policy.reclaimable = true;
  auto policy_of = [&](const std::string& queue) {
    EXPECT_EQ(queue, "research");
    return policy;
  };
  IdleJobTracker tracker;
  FakeClock clock;
  auto observe = [&](double utilization) {
    return tracker.Observe(JobGpuUses({Gpu(0, "train", utilization)}), clock.Now(), policy_of);
  };
  TimePoint start = clock.Now();
  EXPECT_TRUE(observe(10).empty());
  clock.Advance(minutes(29));
  EXPECT_TRUE(observe(25).empty());
  EXPECT_TRUE(tracker.Reclaimable().empty());
  clock.Advance(minutes(1));
  std::vector<IdleJob> idle = observe(5);
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(idle[0].job, "train");
  EXPECT_EQ(idle[0].namespace_name, "team-a");
  EXPECT_DOUBLE_EQ(idle[0].busy_ratio, 0.05);
  EXPECT_EQ(idle[0].idle_since, start);
  EXPECT_TRUE(idle[0].reclaimable);
  EXPECT_EQ(DescribeIdleJob(idle[0], policy),
            "GPUs 5 % busy, under the queue's 30 % threshold since " + FormatRfc3339(start) +
                "; reclaimable: preemption takes this job first");
  EXPECT_THAT(tracker.Reclaimable(),
              ::testing::ElementsAre(std::pair<std::string, std::string>("team-a", "train")));
  // Reported once per spell.
  clock.Advance(minutes(10));
  EXPECT_TRUE(observe(5).empty());
  // Busy again: the spell ends, and a new one must last the whole idle time again.
  EXPECT_TRUE(observe(30).empty());
  EXPECT_TRUE(tracker.Reclaimable().empty());
  EXPECT_TRUE(observe(0).empty());
  clock.Advance(minutes(30));
  EXPECT_EQ(observe(0).size(), 1u);
}

TEST(IdleJobTrackerTest, AJobThatGoesAwayStartsOver) {
  IdleJobTracker tracker;
  FakeClock clock;
  auto policy_of = [](const std::string&) { return IdlePolicy{}; };
  EXPECT_TRUE(tracker.Observe(JobGpuUses({Gpu(0, "train", 0)}), clock.Now(), policy_of).empty());
  clock.Advance(minutes(20));
  EXPECT_TRUE(tracker.Observe({}, clock.Now(), policy_of).empty());
  clock.Advance(minutes(20));
  EXPECT_TRUE(tracker.Observe(JobGpuUses({Gpu(0, "train", 0)}), clock.Now(), policy_of).empty());
}

}  // namespace
}  // namespace strata::observe
