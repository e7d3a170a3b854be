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

api::JobPlacement Placement() {
  api::JobPlacement placement;
  placement.run = 4;
  placement.flavor = "h100";
  placement.master_addr = "10.0.0.1";
  placement.master_port = 29501;
  placement.bound_at = "2026-01-01T00:00:00Z";
  api::AssignedGpu gpu;
  gpu.index = 3;
  placement.pods = {{0, "node-a", {}}, {1, "node-b", {gpu}}};
  return placement;
}

TEST(TrainingPodTest, APodCarriesWhatTheAgentNeedsForTorchrun) {
  api::Job job = TrainingJob();
  job.metadata.uid = "uid-1";
  job.status.restart_count = 2;
  api::JobPlacement placement = Placement();
  api::Pod pod = MakeJobPod(job, placement, placement.pods[1]);
  EXPECT_EQ(pod.metadata.name, "train-worker-1");
  EXPECT_EQ(PodJobRun(pod), 4);
  EXPECT_EQ(pod.metadata.annotations[api::kFlavorAnnotation], "h100");
  EXPECT_EQ(pod.metadata.annotations[api::kBoundAtAnnotation], "2026-01-01T00:00:00Z");
  EXPECT_EQ(pod.spec.node_name, "node-b");
  EXPECT_EQ(pod.spec.restart_policy, "Never");

  Result<api::TrainingPod> training = api::TrainingPodFromPod(pod);
  ASSERT_TRUE(training.has_value()) << training.error().ToString();
  EXPECT_EQ(training->run_id, "uid-1");
  EXPECT_EQ(training->master_addr, "10.0.0.1");
  EXPECT_EQ(training->master_port, 29501);
  EXPECT_EQ(training->num_nodes, 2);
  EXPECT_EQ(training->node_rank, 1);
  EXPECT_EQ(training->proc_per_node, 4);
  EXPECT_EQ(training->restart_count, 2);
  EXPECT_EQ(pod.status.restart_count, 2);
  EXPECT_EQ(training->max_restarts, 3);
  EXPECT_EQ(training->gpu_indices, std::vector<int>{3});
  EXPECT_EQ(training->checkpoint_dir, "/ckpt/train");
  ASSERT_EQ(training->user_env.size(), 1u);
  EXPECT_EQ(training->user_env[0].first, "EPOCHS");
}

TEST(TrainingPodTest, AMissingOrMalformedAnnotationIsNamed) {
  api::JobPlacement placement = Placement();
  api::Pod pod = MakeJobPod(TrainingJob(), placement, placement.pods[0]);
  pod.metadata.annotations.erase(api::kNumNodesAnnotation);
  Result<api::TrainingPod> missing = api::TrainingPodFromPod(pod);
  ASSERT_FALSE(missing.has_value());
  EXPECT_THAT(missing.error().message(), HasSubstr(api::kNumNodesAnnotation));

  pod.metadata.annotations[api::kNumNodesAnnotation] = "two";
  Result<api::TrainingPod> malformed = api::TrainingPodFromPod(pod);
  ASSERT_FALSE(malformed.has_value());
  EXPECT_THAT(malformed.error().message(), HasSubstr("\"two\""));
}

TEST(TrainingPodTest, AStopRequestKeepsItsFirstReason) {
  api::Pod pod;
  EXPECT_TRUE(RequestStop(pod, api::kStopPreempted, "preempted by x"));
  EXPECT_FALSE(RequestStop(pod, api::kStopJobFailed, "failed"));
  EXPECT_EQ(api::StopRequested(pod), api::kStopPreempted);
}

TEST(TrainingPodTest, NodeAddressPrefersTheAnnotationThenTheHostname) {
  api::Node node;
  node.metadata.name = "node-a";
  EXPECT_EQ(api::NodeAddress(node), "node-a");
  node.metadata.labels["kubernetes.io/hostname"] = "host-a";
  EXPECT_EQ(api::NodeAddress(node), "host-a");
  node.metadata.annotations[api::kNodeAddressAnnotation] = "127.0.0.1";
  EXPECT_EQ(api::NodeAddress(node), "127.0.0.1");
}

}  // namespace
}  // namespace strata::controller
