// Training jobs end to end: the real `strata up` (scheduler, controllers, in-process node agent)
// runs examples/workers/allreduce.py as real worker processes that meet over TCP, and the tests
// kill workers and the control plane with SIGKILL along the way.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <functional>

#include "training_fixture.h"

namespace strata::platform_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;
using TrainingE2eTest = TrainingJobTest;

// What one allreduce job looks like.
struct JobShape {
  std::string name;
  int replicas = 2;
  int proc_per_node = 2;
  int gpus = 1;
  int steps = 30;
  int checkpoint_every = 5;
  double step_sleep = 0.02;
  int priority = 0;
  std::string queue{};  // empty: the default queue
  int max_restarts = 3;
};

std::string JobManifest(const JobShape& job) {
  std::string manifest =
      "apiVersion: strata.dev/v1alpha1\nkind: Job\nmetadata: {name: " + job.name +
      ", namespace: default}\nspec:\n  replicas: " + std::to_string(job.replicas) +
      "\n  procPerNode: " + std::to_string(job.proc_per_node) +
      "\n  maxRestarts: " + std::to_string(job.max_restarts) +
      "\n  priority: " + std::to_string(job.priority) + "\n";
  if (!job.queue.empty()) manifest += "  queue: " + job.queue + "\n";
  manifest += "  resources: {cpu: \"1\", memory: 1Gi, gpu: " + std::to_string(job.gpus) +
              "}\n  template:\n    command: [python3, " + SourceDir() +
              "/examples/workers/allreduce.py]\n    args: [--steps, \"" +
              std::to_string(job.steps) + "\", --checkpoint-every, \"" +
              std::to_string(job.checkpoint_every) + "\", --step-sleep, \"" +
              std::to_string(job.step_sleep) + "\", --timeout, \"20\"]\n";
  return manifest;
}

TEST_F(TrainingE2eTest, ATwoByTwoJobOfAllreduceWorkersSucceedsWithAVerifiedResult) {
  StartUp("2x8:H100-80GB");
  Apply(JobManifest({.name = "allreduce"}));
  ASSERT_TRUE(WaitForPhase("allreduce", "Succeeded")) << JobStatus("allreduce").dump() << "\n"
                                                      << WorkerLogs();
  EXPECT_EQ(Count(WorkerLogs(), "result ok"), 4u) << WorkerLogs();
  EXPECT_EQ(JobStatus("allreduce").value("restartCount", 0), 0);
}

TEST_F(TrainingE2eTest, KillingOneWorkerRestartsTheGroupFromItsCheckpoint) {
  StartUp("2x8:H100-80GB");
  Apply(
      JobManifest({.name = "resilient", .steps = 150, .checkpoint_every = 5, .step_sleep = 0.05}));
  ASSERT_TRUE(WaitFor([&] { return JobStatus("resilient").contains("lastCheckpointTime"); }))
      << JobStatus("resilient").dump();
  std::vector<pid_t> rank3 = Workers("resilient", 3);
  ASSERT_EQ(rank3.size(), 1u);
  ASSERT_EQ(kill(rank3[0], SIGKILL), 0);
  // kubectl logs --previous, while the restarted group runs: the pod's previous instance is the
  // run that was killed.
  const std::string log = "/api/v1/namespaces/default/pods/resilient-worker-1/log?container=rank-3";
  ASSERT_TRUE(WaitFor([&] {
    auto current = client_->GetText(log);
    return current && current->find("rank 3: restart 1: starting at step") != std::string::npos;
  })) << WorkerLogs();
  auto previous = client_->GetText(log + "&previous=true");
  ASSERT_TRUE(previous) << previous.error().ToString();
  EXPECT_THAT(*previous, HasSubstr("rank 3: restart 0: starting at step 0"));
  EXPECT_THAT(*previous, Not(HasSubstr("restart 1")));

  ASSERT_TRUE(WaitForPhase("resilient", "Succeeded")) << JobStatus("resilient").dump() << "\n"
                                                      << WorkerLogs();
  EXPECT_EQ(JobStatus("resilient").value("restartCount", 0), 1);
  std::string logs = WorkerLogs();
  EXPECT_THAT(logs, HasSubstr("restart 1: starting at step"));
  EXPECT_THAT(logs, HasSubstr("(resumed from checkpoint)"));
  EXPECT_EQ(Count(logs, "result ok"), 4u) << logs;
  CommandResult describe = RunStrata({"describe", "job", "resilient", "--server", up_.url()});
  EXPECT_EQ(describe.exit_code, 0) << describe.err;
}

TEST_F(TrainingE2eTest, KillingTheControlPlaneLosesNoJobAndLeavesNoOrphan) {
  StartUp("2x8:H100-80GB");
  Apply(JobManifest({.name = "survivor", .steps = 120, .checkpoint_every = 5, .step_sleep = 0.05}));
  ASSERT_TRUE(WaitForPhase("survivor", "Running")) << JobStatus("survivor").dump();
  ASSERT_FALSE(Workers("survivor").empty());
  up_.Kill();

  UpProcess restarted;
  ASSERT_TRUE(restarted.Start(UpArgs("2x8:H100-80GB"))) << restarted.output();
  Connect(restarted);
  EXPECT_FALSE(JobStatus("survivor").empty()) << "the job is still known";
  ASSERT_TRUE(WaitForPhase("survivor", "Succeeded")) << JobStatus("survivor").dump() << "\n"
                                                     << WorkerLogs();
  EXPECT_THAT(WorkerLogs(), HasSubstr("result ok"));
  EXPECT_TRUE(WaitFor([&] { return Workers("").empty(); }, std::chrono::seconds(30)))
      << "orphan workers: " << Workers("").size();
}

// The control plane killed with SIGKILL at five moments of a job's life, one job each, with no
// restart allowed: each job must still succeed, because the pods' supervisors record how the
// workers ended while no agent watched, and the restarted agent reads that instead of guessing.
TEST_F(TrainingE2eTest, KillingTheControlPlaneAtAnyMomentNeverFailsAJobThatSucceeded) {
  auto up = std::make_unique<UpProcess>();
  ASSERT_TRUE(up->Start(UpArgs("2x8:H100-80GB"))) << up->output();
  Connect(*up);
  auto job_logs_ok = [&] { return Count(WorkerLogs(), "result ok"); };
  size_t results_before = 0;
  struct Moment {
    std::string job;
    int steps;
    // Returns once the moment to kill has come.
    std::function<void(const std::string& job)> wait;
    Duration down = Duration::zero();  // how long the control plane stays down
  };
  const std::vector<Moment> moments = {
      {"after-apply", 40, [](const std::string&) {}},
      {"during-start", 40,
       [&](const std::string& job) {
         EXPECT_TRUE(WaitFor([&] { return !Workers(job).empty(); }, kJobTimeout,
                             std::chrono::milliseconds(5)));
       }},
      {"mid-run", 120,
       [&](const std::string& job) {
         EXPECT_TRUE(WaitFor([&] { return JobStatus(job).contains("lastCheckpointTime"); }));
       }},
      {"while-exiting", 40,
       [&](const std::string&) {
         EXPECT_TRUE(WaitFor([&] { return job_logs_ok() > results_before; }, kJobTimeout,
                             std::chrono::milliseconds(5)));
       }},
      {"down-while-finishing", 120,
       [&](const std::string& job) {
         EXPECT_TRUE(WaitFor([&] { return JobStatus(job).contains("lastCheckpointTime"); }));
       },
       std::chrono::seconds(20)},
  };
  for (const Moment& moment : moments) {
    SCOPED_TRACE(moment.job);
    Apply(JobManifest({.name = moment.job,
                       .steps = moment.steps,
                       .checkpoint_every = 5,
                       .step_sleep = 0.05,
                       .max_restarts = 0}));
    moment.wait(moment.job);
    up->Kill();
    if (moment.down > Duration::zero()) {
      // The workers finish while nothing of the control plane runs, and it stays down a while
      // after (within the nodes' grace period).
      const auto back = std::chrono::steady_clock::now() + moment.down;
      EXPECT_TRUE(WaitFor([&] { return Workers(moment.job).empty(); }, moment.down));
      std::this_thread::sleep_until(back);
    }
    up = std::make_unique<UpProcess>();
    ASSERT_TRUE(up->Start(UpArgs("2x8:H100-80GB"))) << up->output();
    Connect(*up);
    ASSERT_TRUE(WaitForPhase(moment.job, "Succeeded")) << JobStatus(moment.job).dump() << "\n"
                                                       << WorkerLogs();
    EXPECT_EQ(JobStatus(moment.job).value("restartCount", 0), 0) << JobStatus(moment.job).dump();
    EXPECT_EQ(job_logs_ok(), results_before + 4) << WorkerLogs();
    results_before = job_logs_ok();
  }
}

TEST_F(TrainingE2eTest, TwoTeamsOnSixNodesNeverDeadlockOnPartialGangs) {
  StartUp("6x8:H100-80GB");
  for (const char* team : {"team-a", "team-b"}) {
    Apply(JobManifest({.name = team,
                       .replicas = 4,
                       .proc_per_node = 1,
                       .gpus = 8,
                       .steps = 40,
                       .checkpoint_every = 10,
                       .step_sleep = 0.05}));
  }
  std::string first;
  ASSERT_TRUE(WaitFor([&] {
    for (const char* team : {"team-a", "team-b"}) {
      if (JobStatus(team).value("phase", "") == "Running") first = team;
    }
    return !first.empty();
  }));
  const std::string second = first == "team-a" ? "team-b" : "team-a";
  EXPECT_EQ(PodCount(first), 4u);
  EXPECT_EQ(PodCount(second), 0u) << "the waiting job holds no GPU";
  EXPECT_EQ(JobStatus(second).value("phase", ""), "Pending");

  ASSERT_TRUE(WaitForPhase(first, "Succeeded")) << JobStatus(first).dump();
  ASSERT_TRUE(WaitForPhase(second, "Succeeded")) << JobStatus(second).dump() << WorkerLogs();
}

TEST_F(TrainingE2eTest, AHigherPriorityJobPreemptsTheVictimWithLeastWorkSinceItsCheckpoint) {
  StartUp("2x8:H100-80GB");
  Apply(R"(apiVersion: strata.dev/v1alpha1
kind: Queue
metadata: {name: research}
spec:
  preemption: {withinQueue: LowerPriority}
)");
  // "fresh" checkpoints every 2 steps, "stale" never: stopping "fresh" loses less work.
  Apply(JobManifest({.name = "fresh",
                     .replicas = 1,
                     .proc_per_node = 2,
                     .gpus = 8,
                     .steps = 400,
                     .checkpoint_every = 2,
                     .step_sleep = 0.05,
                     .queue = "research"}));
  Apply(JobManifest({.name = "stale",
                     .replicas = 1,
                     .proc_per_node = 2,
                     .gpus = 8,
                     .steps = 400,
                     .checkpoint_every = 100000,
                     .step_sleep = 0.05,
                     .queue = "research"}));
  ASSERT_TRUE(WaitForPhase("fresh", "Running"));
  ASSERT_TRUE(WaitForPhase("stale", "Running"));
  // Timestamps have second precision: wait until the costs differ by whole seconds.
  ASSERT_TRUE(WaitFor([&] {
    Json fresh = JobStatus("fresh");
    return fresh.contains("lastCheckpointTime") && fresh["lastCheckpointTime"].get<std::string>() >
                                                       JobStatus("stale").value("startTime", "~");
  })) << JobStatus("fresh").dump()
      << "\n"
      << JobStatus("stale").dump() << "\n"
      << WorkerLogs();
  std::this_thread::sleep_for(std::chrono::seconds(2));

  Apply(JobManifest({.name = "urgent",
                     .replicas = 1,
                     .proc_per_node = 2,
                     .gpus = 8,
                     .steps = 20,
                     .priority = 100,
                     .queue = "research"}));
  ASSERT_TRUE(WaitForPhase("urgent", "Succeeded")) << JobStatus("urgent").dump();
  EXPECT_EQ(JobStatus("fresh").value("preemptionCount", 0), 1) << JobStatus("fresh").dump();
  EXPECT_EQ(JobStatus("stale").value("preemptionCount", 0), 0) << JobStatus("stale").dump();
  EXPECT_THAT(WorkerLogs(), HasSubstr("SIGTERM received, stopping"));

  ASSERT_TRUE(WaitForPhase("fresh", "Succeeded")) << JobStatus("fresh").dump() << WorkerLogs();
  EXPECT_THAT(WorkerLogs(), HasSubstr("(resumed from checkpoint)"));
}

}  // namespace
}  // namespace strata::platform_test
