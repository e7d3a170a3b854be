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

}  // namespace
}  // namespace strata::kubesched
