#include "kubesched/queue_status.h"

#include <gtest/gtest.h>

namespace strata::kubesched {
namespace {

using nlohmann::json;
using scheduler::Resource;

TEST(QueueStatusTest, UseAndBorrowingPerFlavorInKueuesShape) {
  std::vector<scheduler::Flavor> flavors(2);
  flavors[0].name = "h100";
  flavors[1].name = "a100";
  scheduler::Queue queue;
  queue.name = "team-a";
  scheduler::FlavorQuota h100;
  h100.flavor = 0;
  h100.resources[static_cast<size_t>(Resource::kGpu)] = scheduler::ResourceQuota{4000, {}, {}};
  h100.resources[static_cast<size_t>(Resource::kMemory)] =
      scheduler::ResourceQuota{int64_t{64} << 30, {}, {}};
  scheduler::FlavorQuota a100;
  a100.flavor = 1;
  a100.resources[static_cast<size_t>(Resource::kCpu)] = scheduler::ResourceQuota{8000, {}, {}};
  queue.flavors = {h100, a100};
  QueueFigures figures;
  figures.used_by_flavor[0].amount[static_cast<size_t>(Resource::kGpu)] = 6000;
  figures.used_by_flavor[0].amount[static_cast<size_t>(Resource::kMemory)] = int64_t{16} << 30;
  figures.admitted_workloads = 3;
  figures.pending_workloads = 2;

  json status = ClusterQueueStatus(&queue, "", flavors, figures);
  EXPECT_EQ(status["flavorsUsage"], json::parse(R"([
      {"name": "h100", "resources": [{"name": "memory", "total": "16Gi", "borrowed": "0"},
                                     {"name": "nvidia.com/gpu", "total": "6", "borrowed": "2"}]},
      {"name": "a100", "resources": [{"name": "cpu", "total": "0", "borrowed": "0"}]}])"));
  EXPECT_EQ(status["flavorsReservation"], status["flavorsUsage"]);
  EXPECT_EQ(status["admittedWorkloads"], 3);
  EXPECT_EQ(status["reservingWorkloads"], 3);
  EXPECT_EQ(status["pendingWorkloads"], 2);
  EXPECT_EQ(status["conditions"][0]["status"], "True");
  EXPECT_EQ(status["conditions"][0]["reason"], "Ready");
}

TEST(QueueStatusTest, AQueueStrataCannotEnforceIsInactiveWithTheReason) {
  json status = ClusterQueueStatus(nullptr, "strata runs no admission checks", {}, {});
  EXPECT_EQ(status["flavorsUsage"], json::array());
  EXPECT_EQ(status["conditions"][0]["status"], "False");
  EXPECT_EQ(status["conditions"][0]["reason"], "NotEnforceable");
  EXPECT_EQ(status["conditions"][0]["message"],
            "strata cannot enforce this queue: strata runs no admission checks");
}

TEST(QueueStatusTest, TransitionTimeMovesOnlyWhenTheConditionDoes) {
  TimePoint t0 = TimePoint{} + std::chrono::hours(24 * 365 * 56);
  json first = WithTransitionTime(ClusterQueueStatus(nullptr, "x", {}, {}), json::object(), t0);
  std::string at = first["conditions"][0]["lastTransitionTime"];
  EXPECT_EQ(at, FormatRfc3339(t0));
  json same = WithTransitionTime(ClusterQueueStatus(nullptr, "y", {}, {}), first,
                                 t0 + std::chrono::minutes(5));
  EXPECT_EQ(same["conditions"][0]["lastTransitionTime"], at);
  scheduler::Queue queue;
  json flipped = WithTransitionTime(ClusterQueueStatus(&queue, "", {}, {}), first,
                                    t0 + std::chrono::minutes(5));
  EXPECT_EQ(flipped["conditions"][0]["lastTransitionTime"],
            FormatRfc3339(t0 + std::chrono::minutes(5)));
}

}  // namespace
}  // namespace strata::kubesched
