#include "api/condition.h"

#include <gtest/gtest.h>

namespace strata::api {
namespace {

TEST(ConditionTest, ConditionTransitionTimeChangesOnlyWithItsStatus) {
  std::vector<Condition> conditions;
  TimePoint t0 = FakeClock::kDefaultStart;
  EXPECT_TRUE(SetCondition(conditions, "Scheduled", "False", "WaitingForQuota", "a", t0));
  EXPECT_TRUE(SetCondition(conditions, "Scheduled", "False", "WaitingForQuota", "b",
                           t0 + std::chrono::seconds(5)));
  EXPECT_EQ(FindCondition(conditions, "Scheduled")->last_transition_time, FormatRfc3339(t0));
  EXPECT_FALSE(SetCondition(conditions, "Scheduled", "False", "WaitingForQuota", "b",
                            t0 + std::chrono::seconds(9)));
  EXPECT_TRUE(SetCondition(conditions, "Scheduled", "True", "Scheduled", "placed",
                           t0 + std::chrono::seconds(10)));
  EXPECT_EQ(FindCondition(conditions, "Scheduled")->last_transition_time,
            FormatRfc3339(t0 + std::chrono::seconds(10)));
}

}  // namespace
}  // namespace strata::api
