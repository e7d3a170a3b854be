#include "controller/training_pod.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::controller {
namespace {

using ::testing::HasSubstr;

api::Job TrainingJob() {
  api::Job job;
  job.metadata.name = "train";
  job.metadata.namespace_name = "default";
  job.spec.replicas = 2;
  job.spec.proc_per_node = 4;
  job.spec.max_restarts = 3;
  job.spec.checkpoint.dir = "/ckpt/train";
  job.spec.template_.command = {"python", "train.py"};
  job.spec.template_.env = {{"EPOCHS", "3"}};
  return job;
}

TEST(TrainingPodTest, APodCarriesWhatTheAgentNeedsForTorchrun) {
  JobRun run{"uid-1", "10.0.0.1", 29501, 2};
  api::AssignedGpu gpu;
  gpu.index = 3;
  JobPodPlacement placement{1, "node-b", {gpu}, "h100"};
  api::Pod pod = MakeJobPod(TrainingJob(), run, placement);
  EXPECT_EQ(pod.metadata.name, "train-worker-1");
  EXPECT_EQ(pod.spec.node_name, "node-b");
  EXPECT_EQ(pod.spec.restart_policy, "Never");

  Result<node::TrainingPod> training = TrainingPodFromPod(pod);
  ASSERT_TRUE(training.has_value()) << training.error().ToString();
  EXPECT_EQ(training->run_id, "uid-1");
  EXPECT_EQ(training->master_addr, "10.0.0.1");
  EXPECT_EQ(training->master_port, 29501);
  EXPECT_EQ(training->num_nodes, 2);
  EXPECT_EQ(training->node_rank, 1);
  EXPECT_EQ(training->proc_per_node, 4);
  EXPECT_EQ(training->restart_count, 2);
  EXPECT_EQ(training->max_restarts, 3);
  EXPECT_EQ(training->gpu_indices, std::vector<int>{3});
  EXPECT_EQ(training->checkpoint_dir, "/ckpt/train");
  ASSERT_EQ(training->user_env.size(), 1u);
  EXPECT_EQ(training->user_env[0].first, "EPOCHS");
}

TEST(TrainingPodTest, AMissingOrMalformedAnnotationIsNamed) {
  api::Pod pod = MakeJobPod(TrainingJob(), {"uid-1", "a", 29500, 0}, {0, "node-a", {}, ""});
  pod.metadata.annotations.erase(kNumNodesAnnotation);
  Result<node::TrainingPod> missing = TrainingPodFromPod(pod);
  ASSERT_FALSE(missing.has_value());
  EXPECT_THAT(missing.error().message(), HasSubstr(kNumNodesAnnotation));

  pod.metadata.annotations[kNumNodesAnnotation] = "two";
  Result<node::TrainingPod> malformed = TrainingPodFromPod(pod);
  ASSERT_FALSE(malformed.has_value());
  EXPECT_THAT(malformed.error().message(), HasSubstr("\"two\""));
}

TEST(TrainingPodTest, AStopRequestKeepsItsFirstReason) {
  api::Pod pod;
  EXPECT_TRUE(RequestStop(pod, kStopPreempted, "preempted by x"));
  EXPECT_FALSE(RequestStop(pod, kStopJobFailed, "failed"));
  EXPECT_EQ(StopRequested(pod), kStopPreempted);
}

TEST(TrainingPodTest, NodeAddressPrefersTheAnnotationThenTheHostname) {
  api::Node node;
  node.metadata.name = "node-a";
  EXPECT_EQ(NodeAddress(node), "node-a");
  node.metadata.labels["kubernetes.io/hostname"] = "host-a";
  EXPECT_EQ(NodeAddress(node), "host-a");
  node.metadata.annotations[kNodeAddressAnnotation] = "127.0.0.1";
  EXPECT_EQ(NodeAddress(node), "127.0.0.1");
}

}  // namespace
}  // namespace strata::controller
