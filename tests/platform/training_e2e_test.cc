// Training jobs end to end: the real `strata up` (scheduler, controllers, in-process node agent)
// runs examples/workers/allreduce.py as real worker processes that meet over TCP, and the tests
// kill workers and the control plane with SIGKILL along the way.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <sstream>
#include <thread>

#include "client/api_client.h"
#include "node/test_support.h"
#include "strata_process.h"

namespace strata::platform_test {
namespace {

using ::strata::node::testing::ReadFileOrEmpty;
using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kNoNvml[] = "--nvml-library=/nonexistent/libnvidia-ml.so.1";
constexpr Duration kJobTimeout = std::chrono::seconds(90);

bool Bindable(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  bool free = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return free;
}

// The first of kMasterPorts free consecutive ports for the jobs' rendezvous, below the kernel's
// ephemeral range (32768 and up by default): a port there can be taken at any moment by another
// process's outgoing connection (the tests beside this one under ctest -j), and a job whose rank
// 0 cannot bind its MASTER_PORT fails. Blocks start at a place that depends on the process, so
// that tests running at once try different ones first.
int FreeMasterPorts() {
  constexpr int kMasterPorts = 16;
  constexpr int kFirst = 20000;
  constexpr int kBlocks = (32768 - kFirst) / kMasterPorts;
  for (int i = 0; i < kBlocks; ++i) {
    int start = kFirst + ((getpid() + i) % kBlocks) * kMasterPorts;
    bool all_free = true;
    for (int port = start; port < start + kMasterPorts && all_free; ++port) {
      all_free = Bindable(port);
    }
    if (all_free) return start;
  }
  return 29500;
}

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

class TrainingE2eTest : public ::testing::Test {
 protected:
  void TearDown() override {
    // Whatever a test leaves running (a job it did not wait for) goes with it.
    for (pid_t pid : Workers("")) kill(pid, SIGKILL);
  }

  std::vector<std::string> UpArgs(const std::string& simulate) const {
    return {"--data-dir",
            data_.path(),
            "--listen",
            "127.0.0.1:0",
            kNoNvml,
            "--simulate",
            simulate,
            "--first-master-port",
            std::to_string(master_port_),
            "--stop-grace",
            "5"};
  }

  void StartUp(const std::string& simulate) {
    ASSERT_TRUE(up_.Start(UpArgs(simulate))) << up_.output();
    Connect(up_);
  }

  void Connect(const UpProcess& up) {
    auto client = client::ApiClient::Create(up.url(), AdminTokenFor(up.url()));
    ASSERT_TRUE(client);
    client_ = std::move(*client);
  }

  void Apply(const std::string& manifest) {
    auto applied =
        client_->Call("POST", "/apis/strata.dev/v1alpha1/apply", manifest, "application/yaml");
    ASSERT_TRUE(applied) << applied.error().ToString() << "\n" << manifest;
  }

  Json JobStatus(const std::string& name) {
    auto job = client_->Get("/apis/strata.dev/v1alpha1/namespaces/default/jobs/" + name);
    if (!job) return Json::object();
    return (*job).value("status", Json::object());
  }

  size_t PodCount(const std::string& job) {
    auto pods = client_->Get("/api/v1/namespaces/default/pods");
    if (!pods) return 0;
    size_t count = 0;
    for (const Json& pod : (*pods)["items"]) {
      if (pod["metadata"].value("labels", Json::object()).value("strata.dev/job-name", "") == job) {
        ++count;
      }
    }
    return count;
  }

  // Polls until `done` holds, at most `timeout`; returns whether it did.
  template <typename Predicate>
  bool WaitFor(Predicate done, Duration timeout = kJobTimeout,
               Duration poll = std::chrono::milliseconds(100)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(poll);
    }
    return done();
  }

  bool WaitForPhase(const std::string& job, const std::string& phase) {
    return WaitFor([&] { return JobStatus(job).value("phase", "") == phase; });
  }

  // Live worker processes of `job` (every job of this test when empty), optionally of one
  // global rank, found by the checkpoint dir in their environment.
  std::vector<pid_t> Workers(const std::string& job, int rank = -1) const {
    std::string marker = "STRATA_CHECKPOINT_DIR=" + data_.path() + "/checkpoints/default/" + job;
    std::vector<pid_t> pids;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::string stat = ReadFileOrEmpty(entry.path() / "stat");
      size_t state = stat.rfind(')');
      if (state == std::string::npos || stat.size() < state + 3 || stat[state + 2] == 'Z') {
        continue;
      }
      std::string environ = ReadFileOrEmpty(entry.path() / "environ");
      bool ours = false;
      bool rank_matches = rank < 0;
      std::istringstream vars(environ);
      std::string var;
      while (std::getline(vars, var, '\0')) {
        if (var.rfind(marker, 0) == 0) ours = true;
        if (var == "RANK=" + std::to_string(rank)) rank_matches = true;
      }
      if (ours && rank_matches) pids.push_back(std::stoi(name));
    }
    return pids;
  }

  // Everything the workers of every pod printed.
  std::string WorkerLogs() const {
    std::string logs;
    std::error_code error;
    for (const auto& pod : std::filesystem::directory_iterator(data_.path() + "/pods", error)) {
      for (const auto& log : std::filesystem::directory_iterator(pod.path() / "logs", error)) {
        logs += ReadFileOrEmpty(log.path());
      }
    }
    return logs;
  }

  static size_t Count(const std::string& text, const std::string& needle) {
    size_t count = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      ++count;
    }
    return count;
  }

  node::testing::TempDir data_;
  int master_port_ = FreeMasterPorts();
  UpProcess up_;
  std::unique_ptr<client::ApiClient> client_;
};

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
