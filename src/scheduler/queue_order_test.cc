#include "scheduler/queue_order.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace strata::scheduler {
namespace {

using ::testing::HasSubstr;

Workload At(std::string name, int priority, int seconds) {
  Workload w;
  w.name = std::move(name);
  w.priority = priority;
  w.submitted = TimePoint{} + std::chrono::seconds(seconds);
  return w;
}

std::unique_ptr<QueueOrder> Make(std::string_view name) {
  Result<std::unique_ptr<QueueOrder>> order = MakeQueueOrder(name, 7);
  EXPECT_TRUE(order.has_value());
  return std::move(*order);
}

TEST(QueueOrderTest, WithinAQueueHigherPriorityThenEarlierSubmissionGoesFirst) {
  for (std::string_view name : QueueOrderNames()) {
    const auto order = Make(name);
    EXPECT_EQ(order->name(), name);
    std::vector<Workload> queue = {At("late", 0, 30), At("urgent", 5, 40), At("early", 0, 10)};
    std::sort(queue.begin(), queue.end(),
              [&](const Workload& a, const Workload& b) { return order->Before(a, b); });
    EXPECT_EQ(queue[0].name, "urgent");
    EXPECT_EQ(queue[1].name, "early");
    EXPECT_EQ(queue[2].name, "late");
  }
}

TEST(QueueOrderTest, FairShareRanksQueuesByShareAndPriorityFifoByTheirHeads) {
  const Workload old_low = At("a", 0, 10);
  const Workload new_high = At("b", 3, 50);
  // Queue A uses 60 % of its share, queue B 10 %: fair sharing serves B's head first...
  const auto fair = Make("fair-share");
  EXPECT_LT(fair->Rank(0.1, old_low), fair->Rank(0.6, new_high));
  EXPECT_LT(fair->Rank(0.1, new_high), fair->Rank(0.6, old_low));
  // ...priority-fifo the higher-priority head, then the older one, whatever the shares.
  const auto fifo = Make("priority-fifo");
  EXPECT_LT(fifo->Rank(0.9, new_high), fifo->Rank(0.0, old_low));
  EXPECT_LT(fifo->Rank(0.9, old_low), fifo->Rank(0.0, At("c", 0, 20)));
}

TEST(QueueOrderTest, UnknownOrderNamesTheValidOnes) {
  const auto unknown = MakeQueueOrder("lottery", 1);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_THAT(unknown.error().message(), HasSubstr("fair-share or priority-fifo"));
}

}  // namespace
}  // namespace strata::scheduler
