#include "cluster/stored_object.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/manifest.h"

namespace strata::cluster {
namespace {

using ::testing::HasSubstr;

TEST(StoredObjectsTest, AJobsStatusRoundTripsThroughTheStoredForm) {
  Result<std::vector<api::Object>> decoded = api::DecodeManifests({{"job.yaml", R"(
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: train, namespace: default}
spec: {resources: {gpu: 1}, template: {command: [python]}}
)"}});
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  api::Job job = *(*decoded)[0].As<api::Job>();
  job.status.phase = api::JobPhase::kRunning;
  job.status.restart_count = 2;
  job.status.runs = 3;
  job.status.SetCondition("Running", "True", "Running", "all 1 pod(s) running",
                          FakeClock::kDefaultStart);
  api::JobPlacement placement;
  placement.run = 3;
  placement.master_addr = "10.0.0.1";
  placement.master_port = 29500;
  api::AssignedGpu gpu;
  gpu.index = 2;
  gpu.uuid = "GPU-2";
  placement.pods.push_back({0, "gpu-1", {gpu}});
  job.status.placement = placement;
  store::Object stored = EncodeForStore(api::Object(job));
  stored.resource_version = 7;

  Result<api::Object> read = DecodeStoredObject(stored);
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  ASSERT_NE(read->As<api::Job>(), nullptr);
  EXPECT_EQ(read->As<api::Job>()->status, job.status);
  store::Object rewritten = EncodeForStore(*read, stored);
  EXPECT_EQ(rewritten.body, stored.body);
  EXPECT_EQ(rewritten.resource_version, 7);
}

TEST(StoredObjectsTest, ABodyThatDoesNotDecodeNamesTheObjectAndTheField) {
  store::Object broken;
  broken.key = {"Pod", "default", "p"};
  broken.body = {{"apiVersion", "strata.dev/v1alpha1"},
                 {"kind", "Pod"},
                 {"metadata", {{"name", "p"}, {"namespace", "default"}}},
                 {"spec", {{"template", {{"command", {"x"}}}}, {"priority", "high"}}}};
  Result<api::Object> read = DecodeStoredObject(broken);
  ASSERT_FALSE(read.has_value());
  EXPECT_THAT(read.error().message(), HasSubstr("Pod \"default/p\""));
  EXPECT_THAT(read.error().message(), HasSubstr("spec.priority"));
}

}  // namespace
}  // namespace strata::cluster
