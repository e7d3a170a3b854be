#include "server/queue_usage.h"

#include <gtest/gtest.h>

namespace strata::server {
namespace {

using Json = nlohmann::json;

Json Queue(const std::string& name, const std::string& gpu_nominal) {
  return {{"metadata", {{"name", name}}},
          {"spec",
           {{"cohort", "pool"},
            {"flavors",
             {{{"name", "h100"}, {"resources", {{{"name", "gpu"}, {"nominal", gpu_nominal}}}}}}},
            {"localQueues", {{{"namespace", "team-a"}, {"name", "a"}}}}}}};
}

Json Pod(const std::string& queue, const std::string& gpus, const std::string& node,
         const std::string& phase) {
  return {{"metadata", {{"name", "p"}, {"namespace", "team-a"}}},
          {"spec", {{"queue", queue}, {"nodeName", node}, {"resources", {{"gpu", gpus}}}}},
          {"status", {{"phase", phase}}}};
}

Quantity Units(int64_t units) { return Quantity::FromUnits(units); }

TEST(QueueUsageTest, BoundLivePodsCountAndUseAboveNominalIsBorrowed) {
  std::vector<QueueUsage> usage =
      ComputeQueueUsage({Queue("team-a-cq", "8")},
                        {Pod("a", "8", "n0", "Running"), Pod("team-a-cq", "4", "n1", "Pending"),
                         Pod("a", "8", "", "Pending"), Pod("a", "8", "n2", "Succeeded"),
                         Pod("elsewhere", "8", "n3", "Running")});
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].name, "team-a-cq");
  EXPECT_EQ(usage[0].cohort, "pool");
  const ResourceUsage& gpu = usage[0].resources.at("gpu");
  EXPECT_EQ(gpu.nominal, Units(8));
  EXPECT_EQ(gpu.used, Units(12));
  EXPECT_EQ(gpu.borrowed, Units(4));
}

TEST(QueueUsageTest, FractionalRequestsAddInMilliGpus) {
  std::vector<QueueUsage> usage = ComputeQueueUsage(
      {Queue("q", "1")}, {Pod("q", "500m", "n0", "Running"), Pod("q", "250m", "n0", "Running")});
  const ResourceUsage& gpu = usage[0].resources.at("gpu");
  EXPECT_EQ(gpu.used, Quantity::FromMilli(750));
  EXPECT_EQ(gpu.borrowed, Quantity());
}

TEST(QueueUsageTest, ALocalQueueNameCountsOnlyInItsNamespace) {
  Json other = Pod("a", "8", "n0", "Running");
  other["metadata"]["namespace"] = "team-b";
  std::vector<QueueUsage> usage = ComputeQueueUsage({Queue("q", "8")}, {other});
  EXPECT_EQ(usage[0].resources.at("gpu").used, Quantity());
}

}  // namespace
}  // namespace strata::server
