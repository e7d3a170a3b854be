#include "kubecompat/pytorchjob_status.h"

#include <gtest/gtest.h>

#include "api/annotations.h"

namespace strata::kubecompat {
namespace {

using nlohmann::json;

json TwoByTwo() {
  return json::parse(R"({
      "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
      "metadata": {"name": "ptj", "namespace": "team-a", "uid": "u1"},
      "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1}, "Worker": {"replicas": 1}}}})");
}

api::Job JobIn(api::JobPhase phase, int64_t runs) {
  api::Job job;
  job.metadata.name = "ptj";
  job.metadata.namespace_name = "team-a";
  job.status.phase = phase;
  job.status.runs = runs;
  return job;
}

api::Pod PodOf(int64_t replica, int64_t run, api::PodPhase phase) {
  api::Pod pod;
  pod.spec.owner = {"Job", "ptj", replica, 0};
  pod.metadata.annotations[api::kJobRunAnnotation] = std::to_string(run);
  pod.status.phase = phase;
  return pod;
}

std::vector<std::string> Types(const json& status) {
  std::vector<std::string> out;
  for (const json& c : status["conditions"]) {
    out.push_back(c["type"].get<std::string>() + "=" + c["status"].get<std::string>());
  }
  return out;
}

const TimePoint kT0 = TimePoint{} + std::chrono::hours(24 * 365 * 56);

TEST(PyTorchJobStatusTest, ThroughARestartToSuccessTheNewestConditionIsTheState) {
  json ptj = TwoByTwo();
  ptj["status"] = PyTorchJobStatus(ptj, JobIn(api::JobPhase::kPending, 0), {}, kT0);
  EXPECT_EQ(Types(ptj["status"]), (std::vector<std::string>{"Created=True"}));

  std::vector<api::Pod> pods = {PodOf(0, 1, api::PodPhase::kRunning),
                                PodOf(1, 1, api::PodPhase::kRunning)};
  ptj["status"] =
      PyTorchJobStatus(ptj, JobIn(api::JobPhase::kRunning, 1), pods, kT0 + std::chrono::seconds(1));
  EXPECT_EQ(Types(ptj["status"]), (std::vector<std::string>{"Created=True", "Running=True"}));
  EXPECT_EQ(ptj["status"]["replicaStatuses"]["Master"]["active"], 1);
  EXPECT_EQ(ptj["status"]["replicaStatuses"]["Worker"]["active"], 1);
  EXPECT_EQ(ptj["status"]["replicaStatuses"]["Worker"]["selector"], "strata.dev/job-name=ptj");
  const json running = ptj["status"]["conditions"][1];

  api::Job restarting = JobIn(api::JobPhase::kRestarting, 1);
  restarting.status.message = "pod ptj-1 failed; restarting the group (1 of 3)";
  pods[1].status.phase = api::PodPhase::kFailed;
  ptj["status"] = PyTorchJobStatus(ptj, restarting, pods, kT0 + std::chrono::seconds(2));
  EXPECT_EQ(Types(ptj["status"]),
            (std::vector<std::string>{"Created=True", "Running=False", "Restarting=True"}));
  EXPECT_EQ(ptj["status"]["conditions"][2]["message"], restarting.status.message);
  EXPECT_EQ(ptj["status"]["replicaStatuses"]["Worker"]["failed"], 1);

  // The second run's pods count; the first run's no more.
  pods.push_back(PodOf(0, 2, api::PodPhase::kRunning));
  ptj["status"] =
      PyTorchJobStatus(ptj, JobIn(api::JobPhase::kRunning, 2), pods, kT0 + std::chrono::seconds(3));
  EXPECT_EQ(Types(ptj["status"]),
            (std::vector<std::string>{"Created=True", "Restarting=False", "Running=True"}));
  EXPECT_EQ(ptj["status"]["replicaStatuses"]["Master"]["active"], 1);
  EXPECT_EQ(ptj["status"]["replicaStatuses"]["Worker"]["failed"], 0);
  EXPECT_NE(ptj["status"]["conditions"][2]["lastTransitionTime"], running["lastTransitionTime"]);

  api::Job done = JobIn(api::JobPhase::kSucceeded, 2);
  done.status.start_time = "2026-01-01T00:00:00Z";
  done.status.completion_time = "2026-01-01T00:05:00Z";
  ptj["status"] = PyTorchJobStatus(ptj, done, {}, kT0 + std::chrono::seconds(4));
  EXPECT_EQ(Types(ptj["status"]), (std::vector<std::string>{"Created=True", "Restarting=False",
                                                            "Running=False", "Succeeded=True"}));
  EXPECT_EQ(ptj["status"]["conditions"].back()["reason"], "PyTorchJobSucceeded");
  EXPECT_EQ(ptj["status"]["conditions"].back()["message"],
            "PyTorchJob team-a/ptj successfully completed.");
  EXPECT_EQ(ptj["status"]["startTime"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(ptj["status"]["completionTime"], "2026-01-01T00:05:00Z");
}

TEST(PyTorchJobStatusTest, ARestartBetweenTwoReadsStillShows) {
  json ptj = TwoByTwo();
  ptj["status"] = PyTorchJobStatus(ptj, JobIn(api::JobPhase::kRunning, 1), {}, kT0);
  api::Job again = JobIn(api::JobPhase::kRunning, 2);
  again.status.restart_count = 1;
  ptj["status"] = PyTorchJobStatus(ptj, again, {}, kT0 + std::chrono::seconds(1));
  EXPECT_EQ(Types(ptj["status"]),
            (std::vector<std::string>{"Created=True", "Restarting=False", "Running=True"}));
  EXPECT_EQ(ptj["status"]["conditions"][1]["message"], "PyTorchJob team-a/ptj restarted 1 time.");

  api::Job done = JobIn(api::JobPhase::kSucceeded, 2);
  done.status.restart_count = 1;
  json finished = PyTorchJobStatus(TwoByTwo(), done, {}, kT0 + std::chrono::seconds(2));
  EXPECT_EQ(Types(finished),
            (std::vector<std::string>{"Created=True", "Restarting=False", "Succeeded=True"}));
}

TEST(PyTorchJobStatusTest, AnUnchangedStateNeedsNoWrite) {
  json ptj = TwoByTwo();
  ptj["status"] = PyTorchJobStatus(ptj, JobIn(api::JobPhase::kRunning, 1), {}, kT0);
  json again =
      PyTorchJobStatus(ptj, JobIn(api::JobPhase::kRunning, 1), {}, kT0 + std::chrono::minutes(1));
  EXPECT_FALSE(StatusChanged(ptj, again));
  EXPECT_EQ(again["conditions"], ptj["status"]["conditions"]);  // times kept
  EXPECT_TRUE(StatusChanged(ptj, PyTorchJobStatus(ptj, JobIn(api::JobPhase::kFailed, 1), {}, kT0)));
}

TEST(PyTorchJobStatusTest, ARefusedJobFailsWithTheReason) {
  json status = RefusedStatus(TwoByTwo(), "spec.elasticPolicy.rdzvBackend: not supported", kT0);
  EXPECT_EQ(Types(status), (std::vector<std::string>{"Created=True", "Failed=True"}));
  EXPECT_EQ(status["conditions"][1]["reason"], "PyTorchJobFailedValidation");
  EXPECT_EQ(status["conditions"][1]["message"], "spec.elasticPolicy.rdzvBackend: not supported");
}

TEST(PyTorchJobStatusTest, WorkersOnlyCountAsWorkers) {
  json ptj = json::parse(R"({"metadata": {"name": "ptj", "namespace": "team-a"},
      "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 2}}}})");
  json status = PyTorchJobStatus(
      ptj, JobIn(api::JobPhase::kRunning, 1),
      {PodOf(0, 1, api::PodPhase::kRunning), PodOf(1, 1, api::PodPhase::kSucceeded)}, kT0);
  EXPECT_FALSE(status["replicaStatuses"].contains("Master"));
  EXPECT_EQ(status["replicaStatuses"]["Worker"]["active"], 1);
  EXPECT_EQ(status["replicaStatuses"]["Worker"]["succeeded"], 1);
}

}  // namespace
}  // namespace strata::kubecompat
