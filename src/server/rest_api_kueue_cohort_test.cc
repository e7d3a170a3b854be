// Kueue's Cohorts with quota of their own, stored as Queues that only lend (spec.lendOnly) and
// served at /apis/kueue.x-k8s.io/v1beta2/cohorts (and v1beta1) as written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "server/rest_api_test_fixture.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kCohorts[] = "/apis/kueue.x-k8s.io/v1beta2/cohorts";
constexpr char kCohort[] = "/apis/kueue.x-k8s.io/v1beta2/cohorts/shared";
constexpr char kClusterQueues[] = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues";
constexpr char kTable[] = "application/json;as=Table;v=v1;g=meta.k8s.io";

constexpr char kCohortDocument[] = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: shared}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: pool
      resources: [{name: nvidia.com/gpu, nominalQuota: 4}]
)";

constexpr char kMemberQueue[] = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  cohortName: shared
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: pool
      resources: [{name: nvidia.com/gpu, nominalQuota: 0, borrowingLimit: 4}]
)";

using KueueCohortTest = RestApiTest;

TEST_F(KueueCohortTest, ACohortIsStoredAsAQueueThatOnlyLendsAndServedAsWritten) {
  Start();
  auto [code, created] = Send("POST", kCohorts, kCohortDocument);
  ASSERT_EQ(code, 201) << created.dump();
  auto [get_code, got] = Send("GET", kCohort);
  ASSERT_EQ(get_code, 200) << got.dump();
  EXPECT_EQ(got["kind"], "Cohort");
  EXPECT_EQ(got["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"], 4);
  EXPECT_FALSE(got.contains("status"));
  Result<store::Object> queue = store_->Get({"Queue", "", "shared"});
  ASSERT_TRUE(queue) << queue.error().ToString();
  EXPECT_EQ(queue->body["spec"]["cohort"], "shared");
  EXPECT_EQ(queue->body["spec"]["lendOnly"], true);
  EXPECT_EQ(queue->body["spec"]["flavors"][0]["name"], "pool");
  // Cohorts and ClusterQueues are served apart, though both are Queues.
  ASSERT_EQ(Send("POST", kClusterQueues, kMemberQueue).first, 201);
  auto [cohorts_code, cohorts] = Send("GET", kCohorts);
  ASSERT_EQ(cohorts["items"].size(), 1u) << cohorts.dump();
  EXPECT_EQ(cohorts["items"][0]["metadata"]["name"], "shared");
  auto [queues_code, queues] = Send("GET", kClusterQueues);
  ASSERT_EQ(queues["items"].size(), 1u) << queues.dump();
  EXPECT_EQ(queues["items"][0]["metadata"]["name"], "team");
  EXPECT_EQ(Send("GET", std::string(kClusterQueues) + "/shared").first, 404);
  // kubectl get cohorts: NAME AGE, as Kueue's CRD prints.
  auto [table_code, table] = Send("GET", kCohorts, "", "", kTable);
  EXPECT_EQ(table["columnDefinitions"].size(), 2u) << table.dump();
  // At v1beta1 too.
  EXPECT_EQ(Send("GET", "/apis/kueue.x-k8s.io/v1beta1/cohorts/shared").first, 200);
  EXPECT_EQ(Send("DELETE", kCohort).first, 200);
  EXPECT_FALSE(store_->Get({"Queue", "", "shared"}));
}

TEST_F(KueueCohortTest, WhatStrataCannotHonourOrWouldConfuseIsRefused) {
  Start();
  // One level: a parent is refused, naming the field.
  std::string with_parent = kCohortDocument;
  with_parent.replace(with_parent.find("spec:\n"), 6, "spec:\n  parentName: org\n");
  auto [parent_code, parent] = Send("POST", kCohorts, with_parent);
  EXPECT_EQ(parent_code, 400);
  EXPECT_THAT(parent.dump(), HasSubstr("spec.parentName"));
  // A cohort's limits need a parent (Kueue's rule).
  std::string with_limit = kCohortDocument;
  with_limit.replace(with_limit.find("nominalQuota: 4"), 15, "nominalQuota: 4, lendingLimit: 2");
  auto [limit_code, limit] = Send("POST", kCohorts, with_limit);
  EXPECT_EQ(limit_code, 400);
  EXPECT_THAT(limit.dump(), HasSubstr("lendingLimit: only a Cohort with a parent has limits"));

  ASSERT_EQ(Send("POST", kCohorts, kCohortDocument).first, 201);
  // A ClusterQueue of the cohort's name would replace it: refused, by kubectl or strata apply.
  std::string same_name = kMemberQueue;
  same_name.replace(same_name.find("name: team"), 10, "name: shared");
  EXPECT_NE(Send("POST", kClusterQueues, same_name).first, 201);
  Result<Json> applied = Post(api::kApplyPath, same_name);
  ASSERT_FALSE(applied);
  EXPECT_THAT(applied.error().message(), HasSubstr("a Cohort \"shared\" exists"));
  EXPECT_EQ(Send("GET", kCohort).first, 200);
  // A LocalQueue names ClusterQueues, not cohorts.
  auto [local_code, local] =
      Send("POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/localqueues",
           "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
           "metadata: {name: q, namespace: team-a}\nspec: {clusterQueue: shared}\n");
  EXPECT_EQ(local_code, 400);
  EXPECT_THAT(local.dump(), HasSubstr("is a Cohort, not a ClusterQueue"));
}

}  // namespace
}  // namespace strata::server
