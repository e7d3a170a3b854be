#include "kubesched/kueue_quotas.h"

#include <gtest/gtest.h>

#include <functional>

#include "common/quantity.h"

namespace strata::kubesched {
namespace {

using nlohmann::json;
using scheduler::Resource;

KueueObjects TwoTeams() {
  KueueObjects objects;
  objects.resource_flavors["h100"] = json::parse(R"({"metadata": {"name": "h100"},
      "spec": {"nodeLabels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}}})");
  objects.resource_flavors["spare"] = json::parse(R"({"metadata": {"name": "spare"}})");
  objects.cluster_queues["team-a"] = json::parse(R"({"metadata": {"name": "team-a"},
      "spec": {"cohortName": "pool", "namespaceSelector": {}, "queueingStrategy": "StrictFIFO",
               "fairSharing": {"weight": "2"},
               "preemption": {"withinClusterQueue": "LowerPriority",
                              "reclaimWithinCohort": "Any"},
               "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                 "flavors": [
                   {"name": "h100", "resources": [{"name": "cpu", "nominalQuota": "500m"},
                      {"name": "memory", "nominalQuota": "2Gi"},
                      {"name": "nvidia.com/gpu", "nominalQuota": 4, "borrowingLimit": "2",
                       "lendingLimit": 1}]},
                   {"name": "spare", "resources": [{"name": "nvidia.com/gpu",
                                                    "nominalQuota": 8}]}]}]},
      "status": {"pendingWorkloads": 3}})");
  objects.priority_classes["urgent"] =
      json::parse(R"({"metadata": {"name": "urgent"}, "value": 1000, "description": "first"})");
  objects.local_queues["research/user-queue"] = json::parse(
      R"({"metadata": {"name": "user-queue", "namespace": "research"},
          "spec": {"clusterQueue": "team-a"}})");
  return objects;
}

TEST(KueueQuotasTest, ClusterQueueBecomesAQueueWithItsFlavorsInOrder) {
  KueueQuotas quotas = QuotasFromKueue(TwoTeams());
  ASSERT_TRUE(quotas.invalid.empty()) << quotas.invalid.begin()->second;
  ASSERT_EQ(quotas.flavors.size(), 2u);
  ASSERT_EQ(quotas.queues.size(), 1u);
  const scheduler::Queue& queue = quotas.queues[0];
  EXPECT_EQ(queue.name, "team-a");
  EXPECT_EQ(queue.cohort, "pool");
  EXPECT_EQ(queue.weight, 2.0);
  EXPECT_EQ(queue.strategy, scheduler::QueueingStrategy::kStrictFifo);
  EXPECT_TRUE(queue.preempt_lower_priority);
  EXPECT_TRUE(queue.reclaim_within_cohort);
  ASSERT_EQ(queue.flavors.size(), 2u);
  EXPECT_EQ(quotas.flavors[static_cast<size_t>(queue.flavors[0].flavor)].name, "h100");
  const auto& gpu = queue.flavors[0].resources[static_cast<size_t>(Resource::kGpu)];
  ASSERT_TRUE(gpu.has_value());
  EXPECT_EQ(gpu->nominal, 4000);
  EXPECT_EQ(gpu->borrowing_limit, 2000);
  EXPECT_EQ(gpu->lending_limit, 1000);
  EXPECT_EQ(queue.flavors[0].resources[static_cast<size_t>(Resource::kCpu)]->nominal, 500);
  EXPECT_EQ(queue.flavors[0].resources[static_cast<size_t>(Resource::kMemory)]->nominal,
            int64_t{2} << 30);
  EXPECT_FALSE(queue.flavors[1].resources[static_cast<size_t>(Resource::kCpu)].has_value());
  EXPECT_EQ(quotas.ClusterQueueFor("research", "user-queue"), "team-a");
  EXPECT_EQ(quotas.priority_classes.at("urgent"), 1000);
  EXPECT_EQ(quotas.ClusterQueueFor("default", "user-queue"), std::nullopt);

  scheduler::Node h100;
  h100.labels = {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}};
  EXPECT_EQ(quotas.FlavorOf("team-a", h100), queue.flavors[0].flavor);
  scheduler::Node other;
  EXPECT_EQ(quotas.FlavorOf("team-a", other), queue.flavors[1].flavor);  // "spare": any node
  EXPECT_EQ(quotas.FlavorOf("team-b", h100), -1);
}

TEST(KueueQuotasTest, KueueDefaultsPreemptNothingAndAdmitNoNamespace) {
  KueueObjects objects = TwoTeams();
  json& spec = objects.cluster_queues["team-a"]["spec"];
  spec.erase("preemption");
  KueueQuotas quotas = QuotasFromKueue(objects);
  ASSERT_EQ(quotas.queues.size(), 1u);
  EXPECT_FALSE(quotas.queues[0].preempt_lower_priority);
  EXPECT_FALSE(quotas.queues[0].reclaim_within_cohort);

  spec.erase("namespaceSelector");
  quotas = QuotasFromKueue(objects);
  EXPECT_TRUE(quotas.queues.empty());
  EXPECT_EQ(quotas.invalid.at("team-a"),
            "it admits no namespace (spec.namespaceSelector is unset; {} admits all)");
}

TEST(KueueQuotasTest, WhatStrataCannotEnforceLeavesTheQueueOutWithTheReason) {
  auto invalid_with = [](const std::function<void(json&)>& change) {
    KueueObjects objects = TwoTeams();
    change(objects.cluster_queues["team-a"]["spec"]);
    KueueQuotas quotas = QuotasFromKueue(objects);
    EXPECT_TRUE(quotas.queues.empty());
    return quotas.invalid.count("team-a") ? quotas.invalid.at("team-a") : "";
  };
  EXPECT_EQ(invalid_with([](json& s) { s["stopPolicy"] = "Hold"; }),
            "it is stopped (spec.stopPolicy Hold)");
  EXPECT_EQ(invalid_with([](json& s) { s["resourceGroups"].push_back(s["resourceGroups"][0]); }),
            "strata enforces one resource group per ClusterQueue, it has 2");
  EXPECT_EQ(invalid_with([](json& s) {
              s["resourceGroups"][0]["flavors"][1]["resources"][0]["name"] = "pods";
            }),
            "strata enforces quota in cpu, memory and nvidia.com/gpu, not \"pods\"");
  EXPECT_EQ(invalid_with([](json& s) { s["resourceGroups"][0]["flavors"][0]["name"] = "a100"; }),
            "ResourceFlavor \"a100\" does not exist");
  EXPECT_EQ(invalid_with([](json& s) {
              s["resourceGroups"][0]["flavors"][1]["resources"][0]["nominalQuota"] = "lots";
            }),
            "spec.resourceGroups[0].flavors[1].resources[0].nominalQuota: " +
                Quantity::Parse("lots").error().message());
  EXPECT_EQ(invalid_with([](json& s) { s["admissionChecksStrategy"] = json::object(); }),
            "strata runs no admission checks");
}

}  // namespace
}  // namespace strata::kubesched
