#include "kubesched/owner_jobs.h"

#include <gtest/gtest.h>

namespace strata::kubesched {
namespace {

TEST(OwnerJobsTest, PodsAtOnceAndKueuesLabels) {
  nlohmann::json job = nlohmann::json::parse(R"({
    "metadata": {"namespace": "team-a", "name": "sample",
                 "labels": {"kueue.x-k8s.io/queue-name": "team-a",
                            "kueue.x-k8s.io/priority-class": "urgent"}},
    "spec": {"parallelism": 4, "completions": 8}})");
  JobSpec spec = JobFromKube(job);
  EXPECT_EQ(spec.pods, 4);
  EXPECT_EQ(spec.queue_name, "team-a");
  EXPECT_EQ(spec.priority_class, "urgent");
  job["status"]["succeeded"] = 6;  // no more pods at once than completions remain
  EXPECT_EQ(JobFromKube(job).pods, 2);
  job["spec"].erase("parallelism");
  job["spec"].erase("completions");
  EXPECT_EQ(JobFromKube(job).pods, 1);  // the API's default
}

TEST(OwnerJobsTest, AnOlderVersionOfTheSameJobDoesNotSupersedeANewerOne) {
  nlohmann::json job = nlohmann::json::parse(R"({
    "metadata": {"namespace": "team-a", "name": "sample", "uid": "u-1", "resourceVersion": "120",
                 "labels": {"kueue.x-k8s.io/queue-name": "team-a"}},
    "spec": {"suspend": true, "parallelism": 4}})");
  JobSpec suspended = JobFromKube(job);
  EXPECT_EQ(suspended.resource_version, 120);
  // strata's admission: the patch's reply, at a later revision.
  job["metadata"]["resourceVersion"] = "135";
  job["metadata"]["annotations"]["strata.dev/kueue-admission"] = "h100";
  job["spec"]["suspend"] = false;
  JobSpec admitted = JobFromKube(job);
  ASSERT_EQ(admitted.admitted_flavor, "h100");
  EXPECT_TRUE(admitted.Supersedes(suspended));
  // The Job controller's write from before the admission, delivered late by the watch.
  EXPECT_FALSE(suspended.Supersedes(admitted));
  EXPECT_TRUE(admitted.Supersedes(admitted));

  // Another Job of the same name, or a version that is not a number, always supersedes.
  JobSpec recreated = suspended;
  recreated.uid = "u-2";
  EXPECT_TRUE(recreated.Supersedes(admitted));
  job["metadata"]["resourceVersion"] = "opaque";
  EXPECT_EQ(JobFromKube(job).resource_version, 0);
  EXPECT_TRUE(JobFromKube(job).Supersedes(admitted));
}

}  // namespace
}  // namespace strata::kubesched
