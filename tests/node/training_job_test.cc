// Runs examples/workers/allreduce.py as a training job of several pods through ProcessRuntime,
// with each worker's environment from api::BuildWorkerEnvironments, as the node agent will.

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "api/torchrun_env.h"
#include "common/check.h"
#include "node/checkpoint_watcher.h"
#include "node/process_runtime.h"
#include "node/test_support.h"

namespace strata::node {
namespace {

using ::strata::node::testing::ReadFileOrEmpty;
using ::strata::node::testing::TempDir;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

constexpr Duration kJobTimeout = 240s;

std::string WorkerScript() {
  const char* source = std::getenv("STRATA_SOURCE_DIR");
  return std::string(source != nullptr ? source : STRATA_DEFAULT_SOURCE_DIR) +
         "/examples/workers/allreduce.py";
}

// A loopback port that was free a moment ago: rank 0 binds it for the rendezvous.
int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  STRATA_CHECK(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  STRATA_CHECK(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  socklen_t length = sizeof address;
  STRATA_CHECK(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  close(fd);
  return ntohs(address.sin_port);
}

struct JobShape {
  int pods = 2;
  int workers_per_pod = 4;
  std::vector<std::string> worker_args;
};

class TrainingJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ProcessRuntime::Options options;
    options.data_dir = data_.path();
    Result<std::unique_ptr<ProcessRuntime>> runtime = ProcessRuntime::Create(options);
    ASSERT_TRUE(runtime) << runtime.error().ToString();
    runtime_ = std::move(*runtime);
    Result<std::unique_ptr<CheckpointWatcher>> watcher = CheckpointWatcher::Create(&clock_);
    ASSERT_TRUE(watcher) << watcher.error().ToString();
    watcher_ = std::move(*watcher);
    ASSERT_TRUE(watcher_->Watch(checkpoints_.path()).ok());
    master_port_ = FreeLoopbackPort();
  }

  static std::string PodUid(int restart_count, int node_rank) {
    return "allreduce-r" + std::to_string(restart_count) + "-n" + std::to_string(node_rank);
  }

  // Starts every pod of the job for the given restart; returns their uids.
  std::vector<std::string> StartJob(const JobShape& shape, int restart_count) {
    std::vector<std::string> uids;
    for (int node_rank = 0; node_rank < shape.pods; ++node_rank) {
      api::TrainingPod pod;
      pod.job_name = "allreduce";
      pod.run_id = "allreduce-run";
      pod.master_addr = "127.0.0.1";
      pod.master_port = master_port_;
      pod.num_nodes = shape.pods;
      pod.node_rank = node_rank;
      pod.proc_per_node = shape.workers_per_pod;
      pod.restart_count = restart_count;
      pod.max_restarts = 3;
      for (int g = 0; g < shape.workers_per_pod; ++g) {
        pod.gpu_indices.push_back(node_rank * shape.workers_per_pod + g);
      }
      pod.checkpoint_dir = checkpoints_.path();
      pod.user_env = {{"PATH", "/usr/bin:/bin"}, {"PYTHONUNBUFFERED", "1"}};
      Result<std::vector<api::Environment>> envs = api::BuildWorkerEnvironments(pod);
      EXPECT_TRUE(envs) << envs.error().ToString();
      PodSpec spec;
      spec.uid = PodUid(restart_count, node_rank);
      spec.gpu_indices = pod.gpu_indices;
      for (int local_rank = 0; local_rank < shape.workers_per_pod; ++local_rank) {
        ProcessSpec process;
        process.name = "worker-" + std::to_string(local_rank);
        process.argv = {"python3", WorkerScript()};
        process.argv.insert(process.argv.end(), shape.worker_args.begin(), shape.worker_args.end());
        process.env = (*envs)[local_rank];
        spec.processes.push_back(std::move(process));
      }
      Status started = runtime_->Start(spec);
      EXPECT_TRUE(started.ok()) << started.ToString();
      uids.push_back(spec.uid);
    }
    return uids;
  }

  // Waits for every pod; returns whether all succeeded, printing the logs of any that did not.
  bool WaitForJob(const std::vector<std::string>& uids) {
    bool succeeded = true;
    for (const std::string& uid : uids) {
      Result<PodStatus> status = runtime_->WaitForExit(uid, kJobTimeout);
      if (!status) {
        ADD_FAILURE() << status.error().ToString();
        runtime_->Stop(uid, 1s).IgnoreError();
        return false;
      }
      for (const ProcessStatus& process : status->processes) {
        if (process.Succeeded()) continue;
        succeeded = false;
        ADD_FAILURE() << uid << "/" << process.name << " exit " << process.exit_code.value_or(-1)
                      << " signal " << process.signal.value_or(0) << ":\n"
                      << ReadFileOrEmpty(process.log_path);
      }
    }
    return succeeded;
  }

  std::string Log(const std::string& uid, int local_rank) {
    return ReadFileOrEmpty(runtime_->PodDir(uid) + "/logs/worker-" + std::to_string(local_rank) +
                           ".log");
  }

  TempDir data_;
  TempDir checkpoints_;
  FakeClock clock_;
  std::unique_ptr<ProcessRuntime> runtime_;
  std::unique_ptr<CheckpointWatcher> watcher_;
  int master_port_ = 0;
};

TEST_F(TrainingJobTest, TwoPodsOfFourWorkersReduceToTheRightResult) {
  JobShape shape;
  shape.worker_args = {"--steps", "40", "--checkpoint-every", "10", "--step-sleep", "0"};
  std::vector<std::string> uids = StartJob(shape, /*restart_count=*/0);
  ASSERT_TRUE(WaitForJob(uids));
  EXPECT_THAT(Log(uids[0], 0), HasSubstr("rank 0: result ok"));
  EXPECT_THAT(Log(uids[1], 3), HasSubstr("rank 7: result ok"));
  EXPECT_THAT(Log(uids[0], 0), HasSubstr("checkpoint at step 40"));
  EXPECT_GE(watcher_->checkpoints_seen(checkpoints_.path()), 1u);
  EXPECT_EQ(watcher_->LastCheckpoint(checkpoints_.path()), clock_.Now());
}

TEST_F(TrainingJobTest, AWorkerKilledMidRunIsRecoveredByAGroupRestartFromTheCheckpoint) {
  JobShape shape;
  // Long enough that the kill lands mid-run: at least 6 s of steps after the first checkpoint.
  shape.worker_args = {"--steps",   "400", "--checkpoint-every", "20",
                       "--timeout", "20",  "--step-sleep",       "0.02"};
  std::vector<std::string> first = StartJob(shape, /*restart_count=*/0);
  ASSERT_TRUE(watcher_->WaitForCheckpoints(checkpoints_.path(), 1, kJobTimeout))
      << Log(first[0], 0);

  Result<PodStatus> victim_pod = runtime_->GetStatus(first[1]);
  ASSERT_TRUE(victim_pod);
  const pid_t victim = victim_pod->processes[1].pid;  // rank 5
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  // What the job controller does on any worker failure: stop the whole group.
  for (const std::string& uid : first) ASSERT_TRUE(runtime_->Stop(uid, 5s).ok());
  Result<PodStatus> stopped = runtime_->GetStatus(first[1]);
  ASSERT_TRUE(stopped);
  EXPECT_EQ(stopped->processes[1].signal, SIGKILL);
  EXPECT_FALSE(stopped->Succeeded());
  EXPECT_THAT(Log(first[0], 0), ::testing::Not(HasSubstr("result ok")));

  std::vector<std::string> second = StartJob(shape, /*restart_count=*/1);
  ASSERT_TRUE(WaitForJob(second));
  EXPECT_THAT(Log(second[0], 0), HasSubstr("(resumed from checkpoint)"));
  EXPECT_THAT(Log(second[0], 0), ::testing::Not(HasSubstr("starting at step 0")));
  EXPECT_THAT(Log(second[1], 1), HasSubstr("rank 5: result ok"));
}

TEST_F(TrainingJobTest, ThirtyTwoWorkersShareOneSmallMachine) {
  JobShape shape;
  shape.pods = 4;
  shape.workers_per_pod = 8;
  shape.worker_args = {"--steps", "20", "--checkpoint-every", "5", "--step-sleep", "0.005"};
  ASSERT_TRUE(WaitForJob(StartJob(shape, /*restart_count=*/0)));
}

}  // namespace
}  // namespace strata::node
