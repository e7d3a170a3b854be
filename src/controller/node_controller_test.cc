#include "controller/node_controller.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster/stored_object.h"
#include "controller/controller_test_support.h"
#include "controller/training_pod.h"

namespace strata::controller {
namespace {

using ::testing::SizeIs;
using testing::TestCluster;

// The status of node `name`'s Ready condition in the store.
std::string ReadyStatus(const TestCluster& cluster, const std::string& name) {
  Result<store::Object> node = cluster.store->Get({"Node", "", name});
  EXPECT_TRUE(node.has_value()) << name;
  if (!node) return "";
  for (const nlohmann::json& condition : node->body["status"]["conditions"]) {
    if (condition.value("type", "") == "Ready") return condition.value("status", "");
  }
  return "";
}

// Node `name` is still Ready 40 s on (the grace period) and lost one second later.
void ExpectLostAfterTheGracePeriod(TestCluster& cluster, NodeController& nodes,
                                   const std::string& name) {
  cluster.clock.Advance(std::chrono::seconds(40));
  ASSERT_TRUE(nodes.RunOnce().ok());
  EXPECT_EQ(ReadyStatus(cluster, name), "True");
  cluster.clock.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(nodes.RunOnce().ok());
  EXPECT_EQ(ReadyStatus(cluster, name), "Unknown");
}

// Applies Job "train": `replicas` ranks of 8 GPUs, one restart allowed.
void ApplyTrainJob(TestCluster& cluster, int replicas) {
  cluster.Apply(fmt::format(R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {{name: train, namespace: default}}
spec:
  replicas: {}
  maxRestarts: 1
  resources: {{gpu: 8}}
  template: {{command: [python, train.py]}}
)",
                            replicas));
}

TEST(NodeControllerTest, ALostNodeFailsItsPodsAndTheJobRestartsElsewhere) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  cluster.AddNode("node-b", 8);
  cluster.AddNode("node-c", 8);
  ApplyTrainJob(cluster, 2);
  cluster.Reconcile(1);
  cluster.StartBoundPods();
  cluster.Reconcile(1);
  ASSERT_EQ(cluster.Job("train").phase, api::JobPhase::kRunning);
  std::set<std::string> used;
  for (const api::Pod& pod : cluster.JobPods("train")) used.insert(pod.spec.node_name);
  const std::string lost = *used.begin();

  cluster.clock.Advance(std::chrono::seconds(30));
  for (const char* node : {"node-a", "node-b", "node-c"}) {
    if (node != lost) cluster.Heartbeat(node);
  }
  cluster.Reconcile(1);
  EXPECT_EQ(cluster.GpusHeldOn(lost), 8);  // still within the grace period

  cluster.clock.Advance(std::chrono::seconds(30));
  for (const char* node : {"node-a", "node-b", "node-c"}) {
    if (node != lost) cluster.Heartbeat(node);
  }
  cluster.Reconcile(1);
  EXPECT_EQ(cluster.GpusHeldOn(lost), 0);
  bool saw_node_lost = false;
  for (const api::Pod& pod : cluster.Pods()) {
    if (pod.spec.node_name == lost) {
      EXPECT_EQ(pod.status.phase, api::PodPhase::kFailed);
      saw_node_lost = pod.status.reason == "NodeLost";
    }
  }
  EXPECT_TRUE(saw_node_lost);
  cluster.Reconcile(1);  // the job controller sees the failure
  EXPECT_EQ(cluster.Job("train").phase, api::JobPhase::kRestarting);

  cluster.StopMarkedPods();
  cluster.Reconcile(2);
  std::vector<api::Pod> pods = cluster.JobPods("train");
  ASSERT_THAT(pods, SizeIs(2));
  for (const api::Pod& pod : pods) EXPECT_NE(pod.spec.node_name, lost);
  EXPECT_EQ(cluster.Job("train").restart_count, 1);

  bool saw_event = false;
  for (const api::Event& event : cluster.Events()) {
    saw_event |= event.reason == "NodeNotReady" && event.involved_object.name == lost;
  }
  EXPECT_TRUE(saw_event);
}

TEST(NodeControllerTest, LeavesNodesThatHeartbeatAlone) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  for (int i = 0; i < 5; ++i) {
    cluster.clock.Advance(std::chrono::seconds(20));
    cluster.Heartbeat("node-a");
    cluster.Reconcile(1);
  }
  for (const api::Event& event : cluster.Events()) EXPECT_NE(event.reason, "NodeNotReady");
}

TEST(NodeControllerTest, ALeaseKeepsANodeAliveBetweenStatusReports) {
  TestCluster cluster;
  cluster.AddNode("renewing", 8);
  cluster.AddNode("silent", 8);
  NodeLeases leases(cluster.clock.Now());
  NodeControllerOptions options;
  options.leases = &leases;
  NodeController nodes(*cluster.store, cluster.cache, cluster.clock, options);
  // Five minutes without a status write: one node renews its Lease every 10 s, the other not.
  for (int beat = 0; beat < 30; ++beat) {
    cluster.clock.Advance(std::chrono::seconds(10));
    leases.Renew("renewing", cluster.clock.Now());
    ASSERT_TRUE(nodes.RunOnce().ok());
  }
  EXPECT_EQ(ReadyStatus(cluster, "renewing"), "True");
  EXPECT_EQ(ReadyStatus(cluster, "silent"), "Unknown");
  bool saw_event = false;
  for (const api::Event& event : cluster.Events()) {
    EXPECT_NE(event.involved_object.name, "renewing");
    saw_event |= event.reason == "NodeNotReady" && event.involved_object.name == "silent";
  }
  EXPECT_TRUE(saw_event);

  // A renewal that stops loses the node once the grace period has passed.
  ExpectLostAfterTheGracePeriod(cluster, nodes, "renewing");
}

TEST(NodeControllerTest, ARestartedPlaneGivesEveryNodeAFullGracePeriodToRenew) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  // The node's last status report is minutes old; the plane's Leases, in memory, start empty.
  cluster.clock.Advance(std::chrono::minutes(4));
  NodeLeases leases(cluster.clock.Now());
  NodeControllerOptions options;
  options.leases = &leases;
  NodeController nodes(*cluster.store, cluster.cache, cluster.clock, options);
  ASSERT_TRUE(nodes.RunOnce().ok());
  EXPECT_EQ(ReadyStatus(cluster, "node-a"), "True");
  ExpectLostAfterTheGracePeriod(cluster, nodes, "node-a");
}

TEST(NodeControllerTest, OnKubernetesTheNodeLifecycleControllerJudgesAndPodsOfANodeNotReadyFail) {
  TestCluster cluster;
  cluster.AddNode("node-a", 8);
  ApplyTrainJob(cluster, 1);
  cluster.Reconcile(1);
  cluster.StartBoundPods();
  NodeControllerOptions options;
  options.mark_lost = false;
  NodeController nodes(*cluster.store, cluster.cache, cluster.clock, options);
  // Minutes without a status report: a kubelet's Lease, not this controller, says it is alive.
  cluster.clock.Advance(std::chrono::minutes(5));
  ASSERT_TRUE(nodes.RunOnce().ok());
  EXPECT_EQ(ReadyStatus(cluster, "node-a"), "True");
  for (const api::Event& event : cluster.Events()) EXPECT_NE(event.reason, "NodeNotReady");
  for (const api::Pod& pod : cluster.JobPods("train")) {
    EXPECT_EQ(pod.status.phase, api::PodPhase::kRunning);
  }

  // kube-controller-manager found its Lease lapsed: Ready=Unknown. Its pods fail.
  Result<store::Object> raw = cluster.store->Get({"Node", "", "node-a"});
  ASSERT_TRUE(raw.has_value());
  Result<api::Object> decoded = cluster::DecodeStoredObject(*raw);
  ASSERT_TRUE(decoded.has_value());
  for (api::NodeCondition& condition : decoded->As<api::Node>()->status.conditions) {
    if (condition.type == "Ready") condition.status = "Unknown";
  }
  ASSERT_TRUE(cluster.store->Update(cluster::EncodeForStore(*decoded, *raw)).has_value());
  ASSERT_TRUE(nodes.RunOnce().ok());
  std::vector<api::Pod> pods = cluster.JobPods("train");
  ASSERT_THAT(pods, SizeIs(1));
  EXPECT_EQ(pods[0].status.phase, api::PodPhase::kFailed);
  EXPECT_EQ(pods[0].status.reason, "NodeLost");
}

}  // namespace
}  // namespace strata::controller
