#include "kubesched/pod_groups.h"

#include <gtest/gtest.h>

namespace strata::kubesched {
namespace {

using nlohmann::json;

json PodGroup() {
  return json::parse(R"({
    "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
    "metadata": {"namespace": "team-a", "name": "trainer-0", "generation": 3},
    "spec": {"schedulingPolicy": {"gang": {"minCount": 4}},
             "schedulingConstraints": {"topology": [{"key": "topology.strata.dev/rack"}]}}})");
}

TEST(PodGroupsTest, AKubernetesPodGroupsGangAndTopology) {
  Result<GroupPolicy> policy = PolicyOfPodGroup(PodGroup());
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_TRUE(policy->gang);
  EXPECT_EQ(policy->min_count, 4);
  EXPECT_EQ(policy->required_topology, "topology.strata.dev/rack");

  json basic = PodGroup();
  basic["spec"]["schedulingPolicy"] = {{"basic", json::object()}};
  policy = PolicyOfPodGroup(basic);
  ASSERT_TRUE(policy);
  EXPECT_FALSE(policy->gang);
}

TEST(PodGroupsTest, BrokenPoliciesNameTheField) {
  json both = PodGroup();
  both["spec"]["schedulingPolicy"]["basic"] = json::object();
  Result<GroupPolicy> policy = PolicyOfPodGroup(both);
  ASSERT_FALSE(policy);
  EXPECT_NE(policy.error().message().find("team-a/trainer-0: spec.schedulingPolicy"),
            std::string::npos)
      << policy.error().message();
  json zero = PodGroup();
  zero["spec"]["schedulingPolicy"]["gang"]["minCount"] = 0;
  policy = PolicyOfPodGroup(zero);
  ASSERT_FALSE(policy);
  EXPECT_NE(policy.error().message().find("gang.minCount"), std::string::npos);
}

TEST(PodGroupsTest, AVolcanoPodGroupsMinMember) {
  json group = json::parse(R"({"metadata": {"namespace": "v", "name": "g"},
                               "spec": {"minMember": 3, "queue": "default"}})");
  Result<GroupPolicy> policy = PolicyOfVolcanoPodGroup(group);
  ASSERT_TRUE(policy);
  EXPECT_EQ(policy->min_count, 3);
  group["spec"].erase("minMember");
  EXPECT_EQ(PolicyOfVolcanoPodGroup(group)->min_count, 1);
  group["spec"]["minMember"] = -1;
  EXPECT_FALSE(PolicyOfVolcanoPodGroup(group));
}

TEST(PodGroupsTest, TheScheduledConditionIsWrittenWhenItChangesAndIsTerminalOnceTrue) {
  TimePoint t0 = ParseRfc3339("2026-12-05T10:00:00Z").value();
  json group = PodGroup();
  group["status"]["conditions"] = json::array({{{"type", "DisruptionTarget"},
                                                {"status", "False"},
                                                {"reason", "X"},
                                                {"message", ""},
                                                {"lastTransitionTime", "2026-12-05T09:00:00Z"}}});
  std::optional<json> patch = PodGroupStatusPatch(group, false, "0/4 nodes are available", t0);
  ASSERT_TRUE(patch);
  const json& conditions = (*patch)["status"]["conditions"];
  ASSERT_EQ(conditions.size(), 2u);
  EXPECT_EQ(conditions[0]["type"], "DisruptionTarget");  // kept
  EXPECT_EQ(conditions[1]["type"], kPodGroupScheduledCondition);
  EXPECT_EQ(conditions[1]["status"], "False");
  EXPECT_EQ(conditions[1]["reason"], "Unschedulable");
  EXPECT_EQ(conditions[1]["observedGeneration"], 3);
  group["status"] = (*patch)["status"];
  // The same again: nothing to write. Another reason: the transition time stays.
  EXPECT_FALSE(PodGroupStatusPatch(group, false, "0/4 nodes are available", t0));
  patch =
      PodGroupStatusPatch(group, false, "1/4 nodes are available", t0 + std::chrono::minutes(1));
  ASSERT_TRUE(patch);
  EXPECT_EQ((*patch)["status"]["conditions"][1]["lastTransitionTime"], "2026-12-05T10:00:00Z");
  patch = PodGroupStatusPatch(group, true, "", t0 + std::chrono::minutes(2));
  ASSERT_TRUE(patch);
  EXPECT_EQ((*patch)["status"]["conditions"][1]["status"], "True");
  EXPECT_EQ((*patch)["status"]["conditions"][1]["lastTransitionTime"], "2026-12-05T10:02:00Z");
  group["status"] = (*patch)["status"];
  EXPECT_FALSE(PodGroupStatusPatch(group, false, "evicted", t0 + std::chrono::minutes(3)));
}

}  // namespace
}  // namespace strata::kubesched
