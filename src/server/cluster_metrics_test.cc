#include "server/cluster_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/test_api_server.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

constexpr char kQueues[] = R"(apiVersion: strata.dev/v1alpha1
kind: Queue
metadata: {name: team-a-cq}
spec:
  cohort: pool
  flavors:
    - name: h100
      resources: [{name: gpu, nominal: 8}, {name: cpu, nominal: 64}]
  localQueues: [{namespace: team-a, name: team-a}]
---
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: big, namespace: team-a}
spec:
  replicas: 4
  queue: team-a
  resources: {gpu: 8}
  template: {command: [python, train.py]}
---
apiVersion: strata.dev/v1alpha1
kind: Pod
metadata: {name: running, namespace: team-a}
spec:
  queue: team-a
  nodeName: n0
  resources: {gpu: 12, cpu: 500m}
  template: {command: ["true"]}
)";

TEST(ClusterMetricsTest, ScrapesShowQueueUseAndPendingWorkloadsByReason) {
  testing::TestApiServer server;
  auto admin = server.Client();
  auto applied =
      admin->Call("POST", "/apis/strata.dev/v1alpha1/apply", kQueues, "application/yaml");
  ASSERT_TRUE(applied) << applied.error().ToString();
  // The queue's use, as the scheduler adapter writes it by the scheduler's charging rules.
  auto queue = server.store().Get({"Queue", "", "team-a-cq"});
  ASSERT_TRUE(queue);
  queue->body["status"] = {
      {"flavorsUsage",
       {{{"name", "h100"},
         {"resources",
          {{{"name", "gpu"}, {"nominal", "8"}, {"used", "12"}, {"borrowed", "4"}},
           {{"name", "cpu"}, {"nominal", "64"}, {"used", "500m"}}}}}}},
      {"admittedWorkloads", 1}};
  ASSERT_TRUE(server.store().Update(*queue));

  auto scraped = admin->GetText("/metrics");
  ASSERT_TRUE(scraped) << scraped.error().ToString();
  EXPECT_THAT(*scraped,
              HasSubstr("strata_queue_nominal_quota{queue=\"team-a-cq\",resource=\"gpu\"} 8\n"));
  EXPECT_THAT(*scraped, HasSubstr("strata_queue_usage{queue=\"team-a-cq\",resource=\"gpu\"} 12\n"));
  EXPECT_THAT(*scraped,
              HasSubstr("strata_queue_usage{queue=\"team-a-cq\",resource=\"cpu\"} 0.5\n"));
  EXPECT_THAT(*scraped,
              HasSubstr("strata_queue_borrowed{queue=\"team-a-cq\",resource=\"gpu\"} 4\n"));
  EXPECT_THAT(*scraped,
              HasSubstr("strata_scheduler_pending_workloads{reason=\"NotYetScheduled\"} 1\n"));
  // The one pod has no status yet: Pending; the other phases are there at zero.
  EXPECT_THAT(*scraped, HasSubstr("strata_pods_by_phase{phase=\"Pending\"} 1\n"));
  EXPECT_THAT(*scraped, HasSubstr("strata_pods_by_phase{phase=\"Running\"} 0\n"));
  EXPECT_THAT(*scraped, HasSubstr("strata_apiserver_objects{kind=\"Job\"} 1\n"));
  EXPECT_THAT(*scraped, HasSubstr("strata_apiserver_objects{kind=\"Service\"} 0\n"));
  EXPECT_THAT(*scraped, HasSubstr("strata_apiserver_pods{phase=\"Pending\"} 1\n"));
  EXPECT_THAT(*scraped, HasSubstr("strata_apiserver_gpus{state=\"held\"} 0\n"));

  // One family asked for: that family alone, brought up to date.
  auto one_family = admin->GetText("/metrics?families=strata_queue_usage");
  ASSERT_TRUE(one_family) << one_family.error().ToString();
  EXPECT_THAT(*one_family,
              HasSubstr("strata_queue_usage{queue=\"team-a-cq\",resource=\"gpu\"} 12\n"));
  EXPECT_THAT(*one_family, Not(HasSubstr("strata_queue_nominal_quota")));
  EXPECT_THAT(*one_family, Not(HasSubstr("strata_apiserver_objects")));

  // The scheduler explains the job: the reason moves, the old one drops to zero.
  auto job = server.store().Get({"Job", "team-a", "big"});
  ASSERT_TRUE(job);
  job->body["status"] = {{"phase", "Pending"}, {"reason", "WaitingForQuota"}};
  ASSERT_TRUE(server.store().Update(*job));
  scraped = admin->GetText("/metrics");
  ASSERT_TRUE(scraped);
  EXPECT_THAT(*scraped,
              HasSubstr("strata_scheduler_pending_workloads{reason=\"WaitingForQuota\"} 1\n"));
  EXPECT_THAT(*scraped,
              HasSubstr("strata_scheduler_pending_workloads{reason=\"NotYetScheduled\"} 0\n"));
  EXPECT_THAT(*scraped, HasSubstr("strata_queue_pending_workloads{queue=\"team-a-cq\","
                                  "reason=\"WaitingForQuota\"} 1\n"));

  // A deleted queue's series go away.
  ASSERT_TRUE(admin->Call("DELETE", "/apis/strata.dev/v1alpha1/queues/team-a-cq"));
  scraped = admin->GetText("/metrics");
  ASSERT_TRUE(scraped);
  EXPECT_THAT(*scraped, Not(HasSubstr("strata_queue_nominal_quota{queue=\"team-a-cq\"")));
}

}  // namespace
}  // namespace strata::server
