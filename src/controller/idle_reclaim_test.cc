#include "controller/idle_reclaim.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/controller_test_support.h"
#include "controller/training_pod.h"

namespace strata::controller {
namespace {

using ::testing::HasSubstr;

// A queue that reclaims jobs idle (under 30 % busy) for ten minutes, and a job in it.
constexpr char kQueueAndJob[] = R"(
apiVersion: strata.dev/v1alpha1
kind: Queue
metadata:
  name: research
  annotations: {strata.dev/idle-threshold: "30%", strata.dev/idle-after: 10m, strata.dev/idle-reclaim: "true"}
---
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: notebook, namespace: default}
spec:
  replicas: 1
  queue: research
  resources: {cpu: "8", memory: 64Gi, gpu: 4}
  template: {command: [python, explore.py]}
)";

constexpr char kSecondJob[] = R"(
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: train, namespace: default}
spec:
  replicas: 1
  queue: research
  resources: {cpu: "8", memory: 64Gi, gpu: 4}
  template: {command: [python, train.py]}
)";

class IdleReclaimTest : public ::testing::Test {
 protected:
  IdleReclaimTest()
      : idle(*cluster.store, cluster.cache,
             std::make_shared<observe::ClusterObjectsCache>(cluster.cache), cluster.clock, [this] {
               observe::GpuReadingsByUuid readings;
               for (int i = 0; i < 4; ++i) {
                 observe::GpuReading reading;
                 reading.utilization_percent = busy_percent;
                 readings["GPU-n1-" + std::to_string(i)] = reading;
               }
               return readings;
             }) {
    cluster.AddNode("n1", 4);
    cluster.Apply(kQueueAndJob);
    cluster.Reconcile(1);
    cluster.StartBoundPods();
    cluster.Reconcile(1);
  }

  bool Reclaimable() const {
    Result<store::Object> raw = cluster.store->Get({"Job", "default", "notebook"});
    EXPECT_TRUE(raw.has_value());
    Result<api::Object> decoded = cluster::DecodeStoredObject(*raw);
    EXPECT_TRUE(decoded.has_value());
    return decoded->As<api::Job>()->metadata.annotations.count(api::kReclaimableAnnotation) > 0;
  }

  void Pass() {
    Status status = idle.RunOnce();
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

  testing::TestCluster cluster;
  double busy_percent = 5;
  IdleReclaimLoop idle;
};

TEST_F(IdleReclaimTest, AJobIdleLongEnoughIsWarnedOnceAndMarkedReclaimable) {
  ASSERT_EQ(cluster.Job("notebook").phase, api::JobPhase::kRunning);
  Pass();
  cluster.AdvanceWithHeartbeats(std::chrono::minutes(5));
  Pass();
  EXPECT_FALSE(Reclaimable());
  cluster.AdvanceWithHeartbeats(std::chrono::minutes(6));
  Pass();
  Pass();
  EXPECT_TRUE(Reclaimable());
  int warnings = 0;
  for (const api::Event& event : cluster.Events()) {
    if (event.reason != observe::kIdleEventReason) continue;
    ++warnings;
    EXPECT_EQ(event.type, "Warning");
    EXPECT_THAT(event.message, HasSubstr("5 % busy"));
  }
  EXPECT_EQ(warnings, 1);
  // Busy again: no longer reclaimable.
  busy_percent = 90;
  Pass();
  EXPECT_FALSE(Reclaimable());
}

TEST_F(IdleReclaimTest, PreemptionTakesTheIdleJobForWorkOfItsQueue) {
  cluster.AdvanceWithHeartbeats(std::chrono::minutes(1));
  Pass();
  cluster.AdvanceWithHeartbeats(std::chrono::minutes(11));
  Pass();
  ASSERT_TRUE(Reclaimable());
  // Same queue, same priority: only idle reclaim lets it in.
  cluster.Apply(kSecondJob);
  for (int i = 0; i < 4; ++i) {
    cluster.Reconcile(1);
    cluster.StopMarkedPods();
    cluster.StartBoundPods();
  }
  EXPECT_EQ(cluster.Job("train").phase, api::JobPhase::kRunning);
  bool preempted = false;
  for (const api::Event& event : cluster.Events()) {
    if (event.reason == "Preempted" && event.message.find("IdleReclaim") != std::string::npos) {
      preempted = true;
    }
  }
  EXPECT_TRUE(preempted);
}

TEST_F(IdleReclaimTest, ABusyJobIsLeftAlone) {
  busy_percent = 80;
  Pass();
  cluster.AdvanceWithHeartbeats(std::chrono::hours(1));
  Pass();
  EXPECT_FALSE(Reclaimable());
  for (const api::Event& event : cluster.Events()) {
    EXPECT_NE(event.reason, observe::kIdleEventReason);
  }
}

}  // namespace
}  // namespace strata::controller
