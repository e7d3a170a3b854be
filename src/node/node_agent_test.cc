#include "node/node_agent.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "api/encode.h"
#include "api/manifest.h"
#include "api/pod_contract.h"
#include "cluster/indexes.h"
#include "node/process_runtime.h"
#include "node/test_support.h"
#include "observe/cluster_gpus.h"

namespace strata::node {
namespace {

using ::testing::HasSubstr;
using testing::ReadFileOrEmpty;
using testing::TempDir;

constexpr Duration kWait = std::chrono::seconds(30);

// A pod bound to `node` that runs `script` with sh.
api::Pod ShellPod(const std::string& name, const std::string& node, const std::string& script) {
  api::Pod pod;
  pod.metadata.name = name;
  pod.metadata.namespace_name = "default";
  pod.spec.restart_policy = "Never";
  pod.spec.node_name = node;
  pod.spec.template_.command = {"sh", "-c", script};
  // Most scripts here use the test's own private files: run them as the test (on a root agent,
  // which allows root pods in these tests).
  pod.spec.template_.security_context.run_as_user = geteuid();
  return pod;
}

// The pod of rank `node_rank` of a 2-pod training job with `procs` workers each.
api::Pod TrainingShellPod(const std::string& job, int node_rank, int procs,
                          const std::string& script) {
  api::Pod pod = ShellPod(job + "-worker-" + std::to_string(node_rank), "node-a", script);
  pod.spec.owner = api::PodOwner{"Job", job, node_rank, node_rank};
  auto& annotations = pod.metadata.annotations;
  annotations[api::kRunIdAnnotation] = "run-1";
  annotations[api::kMasterAddrAnnotation] = "127.0.0.1";
  annotations[api::kMasterPortAnnotation] = "29500";
  annotations[api::kNumNodesAnnotation] = "2";
  annotations[api::kProcPerNodeAnnotation] = std::to_string(procs);
  annotations[api::kRestartCountAnnotation] = "1";
  annotations[api::kMaxRestartsAnnotation] = "3";
  pod.spec.assigned_gpus.resize(2);
  pod.spec.assigned_gpus[0].index = 2;
  pod.spec.assigned_gpus[1].index = 5;
  return pod;
}

// Pod `name`: rank `rank` of replica 0 of Service "chat", in a group of `group_size`, on node-a.
api::Pod ReplicaPod(const std::string& name, int rank, int group_size,
                    std::vector<std::string> command) {
  api::Pod pod = ShellPod(name, "node-a", "");
  pod.spec.template_.command = std::move(command);
  pod.spec.owner = api::PodOwner{"Service", "chat", 0, rank};
  pod.metadata.annotations[api::kServedModelAnnotation] = "llama-8b";
  pod.metadata.annotations[api::kGroupSizeAnnotation] = std::to_string(group_size);
  if (group_size > 1) pod.metadata.annotations[api::kLeaderAddressAnnotation] = "10.0.0.9";
  return pod;
}

// Binds a 500m share of GPU 0 to the pod with `memory` of its memory reserved (the memory, not
// the share, sets the pod's fraction).
void ShareGpu0(api::Pod& pod, const std::string& memory) {
  pod.spec.assigned_gpus.resize(1);
  pod.spec.assigned_gpus[0].share = Quantity::FromMilli(500);
  pod.spec.assigned_gpus[0].memory = *Quantity::Parse(memory);
}

// An executable script at `path` that writes its arguments, one per line, into `out`.
void WriteArgsScript(const std::string& path, const std::string& out) {
  std::ofstream(path) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > " << out << "\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

class NodeAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = store::NewMemoryStore(store::StoreOptions{.clock = &clock_});
    NewAgent();
  }

  // A new runtime and agent over the same data dir, as after a restart of the agent's process.
  void NewAgent(std::optional<EngineSimSubstitution> engine_sim = std::nullopt) {
    agent_.reset();
    runtime_.reset();
    ProcessRuntime::Options options;
    options.data_dir = data_.path();
    options.on_exit = [this](const std::string&, const ProcessStatus&) {
      std::lock_guard<std::mutex> lock(exits_mu_);
      ++exits_;
      exited_.notify_all();
    };
    Result<std::unique_ptr<ProcessRuntime>> runtime = ProcessRuntime::Create(options);
    ASSERT_TRUE(runtime.has_value()) << runtime.error().ToString();
    runtime_ = std::move(*runtime);
    NodeAgentOptions agent_options;
    agent_options.node_names = {"node-a", "node-b"};
    agent_options.data_dir = data_.path();
    agent_options.stop_grace = std::chrono::seconds(5);
    agent_options.base_env = DefaultBaseEnvironment();
    agent_options.api_url = "http://127.0.0.1:7070";
    agent_options.engine_sim = std::move(engine_sim);
    agent_options.allow_root_pods = allow_root_pods_;
    cache_ = std::make_unique<cluster::Cache>(*store_, cluster::NodeAgentCacheOptions());
    agent_ = std::make_unique<NodeAgent>(*store_, *cache_, *runtime_, clock_, agent_options);
  }

  store::Object Create(const api::Pod& pod) {
    store::Object object;
    object.key = {"Pod", pod.metadata.namespace_name, pod.metadata.name};
    object.body = api::EncodeObject(api::Object(pod));
    Result<store::Object> created = store_->Create(object);
    EXPECT_TRUE(created.has_value()) << created.error().ToString();
    return created.value_or(store::Object{});
  }

  api::Pod Get(const std::string& name) {
    Result<store::Object> raw = store_->Get({"Pod", "default", name});
    EXPECT_TRUE(raw.has_value()) << name;
    if (!raw) return {};
    Result<api::Object> decoded = api::DecodeObject(raw->body);
    if (!decoded) {
      ADD_FAILURE() << decoded.error().ToString();
      return {};
    }
    return *decoded->As<api::Pod>();
  }

  void Annotate(const std::string& name, const std::string& key, const std::string& value) {
    Result<store::Object> raw = store_->Get({"Pod", "default", name});
    ASSERT_TRUE(raw.has_value());
    raw->body["metadata"]["annotations"][key] = value;
    ASSERT_TRUE(store_->Update(*raw).has_value());
  }

  // `name` (node-a unless given) at 127.0.0.1 with one 80Gi GPU (index 0), labelled simulated
  // when asked.
  void CreateNode(const std::string& name = "node-a", bool simulated = false) {
    api::Node node;
    node.metadata.name = name;
    node.metadata.annotations[api::kNodeAddressAnnotation] = "127.0.0.1";
    if (simulated) node.metadata.labels[api::kSimulatedLabel] = "true";
    node.status.gpus.resize(1);
    node.status.gpus[0].memory = *Quantity::Parse("80Gi");
    store::Object object;
    object.key = {"Node", "", name};
    object.labels = store::Labels(node.metadata.labels.begin(), node.metadata.labels.end());
    object.body = api::EncodeObject(api::Object(node));
    ASSERT_TRUE(store_->Create(object).has_value());
  }

  void RunPass() {
    Status status = agent_->RunOnce();
    EXPECT_TRUE(status.ok()) << status.ToString();
  }

  // Runs passes, waiting for some process to end in between, until the pod is terminal.
  api::Pod RunUntilTerminal(const store::Object& created) {
    for (int pass = 0; pass < 5; ++pass) {
      int exits_before = Exits();
      RunPass();
      api::Pod pod = Get(created.key.name);
      if (api::PodTerminal(pod)) return pod;
      std::unique_lock<std::mutex> lock(exits_mu_);
      exited_.wait_for(lock, kWait, [&] { return exits_ > exits_before; });
    }
    return Get(created.key.name);
  }

  int Exits() {
    std::lock_guard<std::mutex> lock(exits_mu_);
    return exits_;
  }

  bool allow_root_pods_ = true;
  FakeClock clock_{TimePoint(std::chrono::hours(24 * 365 * 56))};
  TempDir data_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<ProcessRuntime> runtime_;
  std::unique_ptr<cluster::Cache> cache_;
  std::unique_ptr<NodeAgent> agent_;
  std::mutex exits_mu_;
  std::condition_variable exited_;
  int exits_ = 0;  // processes ended, as the runtime reported them
};

TEST_F(NodeAgentTest, RunsAPodToSuccessAndReportsItsTimes) {
  store::Object created = Create(ShellPod("ok", "node-a", "exit 0"));
  RunPass();
  api::Pod running = Get("ok");
  EXPECT_EQ(running.status.phase, api::PodPhase::kRunning);
  EXPECT_EQ(running.metadata.annotations[api::kStartedAtAnnotation], FormatRfc3339(clock_.Now()));

  clock_.Advance(std::chrono::seconds(7));
  api::Pod done = RunUntilTerminal(created);
  EXPECT_EQ(done.status.phase, api::PodPhase::kSucceeded);
  EXPECT_EQ(done.status.exit_code, 0);
  EXPECT_EQ(done.metadata.annotations[api::kFinishedAtAnnotation], FormatRfc3339(clock_.Now()));
}

TEST_F(NodeAgentTest, RecordsHowBusyAPodKeepsItsSimulatedGpusAndWritesOnlyWhenItMoves) {
  CreateNode("node-a", /*simulated=*/true);
  CreateNode("node-b", /*simulated=*/false);
  for (const char* node : {"node-a", "node-b"}) {
    api::Pod pod = ShellPod(std::string("sleeper-") + node, node, "");
    pod.spec.template_.command = {"sleep", "600"};
    pod.spec.assigned_gpus.resize(1);
    Create(pod);
  }
  RunPass();  // starts them
  RunPass();  // begins the first window
  EXPECT_EQ(Get("sleeper-node-a").metadata.annotations.count(api::kGpuActivityAnnotation), 0u);
  clock_.Advance(std::chrono::seconds(30));
  RunPass();
  EXPECT_EQ(Get("sleeper-node-a").metadata.annotations[api::kGpuActivityAnnotation], "0.00");
  Result<store::Object> recorded = store_->Get({"Pod", "default", "sleeper-node-a"});
  ASSERT_TRUE(recorded.has_value());
  // The same use a window later: nothing to write.
  clock_.Advance(std::chrono::seconds(30));
  RunPass();
  Result<store::Object> later = store_->Get({"Pod", "default", "sleeper-node-a"});
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ(later->resource_version, recorded->resource_version);
  // Real GPUs report their own utilisation.
  EXPECT_EQ(Get("sleeper-node-b").metadata.annotations.count(api::kGpuActivityAnnotation), 0u);
  agent_->StopEverything();
}

TEST_F(NodeAgentTest, AFailingProcessFailsThePodWithItsExitCode) {
  store::Object created = Create(ShellPod("bad", "node-b", "exit 3"));
  api::Pod done = RunUntilTerminal(created);
  EXPECT_EQ(done.status.phase, api::PodPhase::kFailed);
  EXPECT_EQ(done.status.exit_code, 3);
  EXPECT_EQ(done.status.reason, "Error");
  EXPECT_EQ(done.status.message, "main exited with code 3");
}

TEST_F(NodeAgentTest, LeavesOtherNodesPodsAlone) {
  Create(ShellPod("elsewhere", "node-z", "exit 0"));
  RunPass();
  EXPECT_EQ(Get("elsewhere").status.phase, api::PodPhase::kPending);
}

TEST_F(NodeAgentTest, APodThatCannotRunFailsWithTheReason) {
  api::Pod pod = ShellPod("nothing", "node-a", "");
  pod.spec.template_.command = {"/nonexistent/strata-test-program"};
  Create(pod);
  RunPass();
  api::Pod failed = Get("nothing");
  EXPECT_EQ(failed.status.phase, api::PodPhase::kFailed);
  EXPECT_EQ(failed.status.reason, "StartError");
  EXPECT_THAT(failed.status.message, HasSubstr("/nonexistent/strata-test-program"));
}

TEST_F(NodeAgentTest, TrainingWorkersGetTorchrunsEnvironmentAndTheirGpus) {
  std::string out = data_.File("out");
  std::filesystem::create_directory(out);
  store::Object created = Create(TrainingShellPod(
      "train", 1, 2,
      "echo \"$RANK $LOCAL_RANK $WORLD_SIZE $MASTER_ADDR:$MASTER_PORT "
      "$TORCHELASTIC_RESTART_COUNT $CUDA_VISIBLE_DEVICES $STRATA_CHECKPOINT_DIR\" > " +
          out + "/$RANK; echo \"$STRATA_CHECKPOINT_URL\" > " + out + "/url-$RANK"));
  api::Pod done = RunUntilTerminal(created);
  ASSERT_EQ(done.status.phase, api::PodPhase::kSucceeded) << done.status.message;
  std::string checkpoints = data_.path() + "/checkpoints/default/train";
  EXPECT_EQ(ReadFileOrEmpty(out + "/2"), "2 0 4 127.0.0.1:29500 1 2,5 " + checkpoints + "\n");
  EXPECT_EQ(ReadFileOrEmpty(out + "/3"), "3 1 4 127.0.0.1:29500 1 2,5 " + checkpoints + "\n");
  EXPECT_EQ(ReadFileOrEmpty(out + "/url-3"),
            "http://127.0.0.1:7070/api/v1/namespaces/default/pods/train-worker-1/checkpoint\n");
}

TEST_F(NodeAgentTest, APodRunningTorchrunGetsOneLauncherWithItsCommandLineExpanded) {
  // A stand-in for torchrun: it appends one line per process that ran.
  const std::string dir = data_.File("bin");
  std::filesystem::create_directory(dir);
  const std::string out = data_.File("launched");
  std::ofstream(dir + "/torchrun") << "#!/bin/sh\necho \"$PET_NPROC_PER_NODE $PET_NODE_RANK "
                                      "${RANK-unset} $*\" >> "
                                   << out << "\n";
  std::filesystem::permissions(dir + "/torchrun", std::filesystem::perms::owner_all);
  api::Pod pod = TrainingShellPod("launch", 1, 2, "");
  pod.spec.template_.command = {dir + "/torchrun"};
  pod.spec.template_.args = {"--nproc-per-node=2", "--rdzv-endpoint",
                             "$(MASTER_ADDR):$(MASTER_PORT)", "--rdzv-id=$(TORCHELASTIC_RUN_ID)",
                             "train.py"};
  api::Pod done = RunUntilTerminal(Create(pod));
  ASSERT_EQ(done.status.phase, api::PodPhase::kSucceeded) << done.status.message;
  EXPECT_EQ(ReadFileOrEmpty(out),
            "2 1 unset --nproc-per-node=2 --rdzv-endpoint 127.0.0.1:29500 --rdzv-id=run-1 "
            "train.py\n");
}

TEST_F(NodeAgentTest, WorkersCommandLinesAreExpandedFromTheirOwnEnvironment) {
  const std::string out = data_.File("ranks");
  api::Pod pod = TrainingShellPod("expand", 0, 2, "");
  pod.spec.template_.command = {"sh", "-c", "echo \"$1\" >> " + out, "sh", "rank $(RANK)"};
  api::Pod done = RunUntilTerminal(Create(pod));
  ASSERT_EQ(done.status.phase, api::PodPhase::kSucceeded) << done.status.message;
  std::string ranks = ReadFileOrEmpty(out);
  EXPECT_TRUE(ranks == "rank 0\nrank 1\n" || ranks == "rank 1\nrank 0\n") << ranks;
}

TEST_F(NodeAgentTest, OneWorkerFailingStopsThePodsOthers) {
  store::Object created = Create(TrainingShellPod(
      "train", 0, 2, "if [ \"$LOCAL_RANK\" = 1 ]; then exit 4; fi; exec sleep 60"));
  api::Pod done = RunUntilTerminal(created);
  EXPECT_EQ(done.status.phase, api::PodPhase::kFailed);
  EXPECT_EQ(done.status.exit_code, 4);
  EXPECT_EQ(done.status.message, "rank-1 exited with code 4");
}

TEST_F(NodeAgentTest, TheFailureNamedIsTheProcessThatEndedFirstNotTheFirstInThePod) {
  // rank-1 fails; rank-0 fails only after rank-1 is gone (a knock-on failure). The shell's $$ is
  // written $$$$: a command line is expanded as Kubernetes does, where $$ stands for $.
  const std::string fifo = data_.File("rank-1-pid");
  testing::MakeFifo(fifo);
  store::Object created = Create(TrainingShellPod(
      "knock-on", 0, 2,
      "if [ \"$LOCAL_RANK\" = 1 ]; then echo $$$$ > " + fifo + "; exit 7; fi; read pid < " + fifo +
          "; while kill -0 $pid 2>/dev/null; do sleep 0.01; done; exit 1"));
  RunPass();                                               // starts them
  ASSERT_TRUE(runtime_->WaitForExit(created.uid, kWait));  // both end before the agent looks
  api::Pod done = RunUntilTerminal(created);
  EXPECT_EQ(done.status.phase, api::PodPhase::kFailed);
  EXPECT_EQ(done.status.exit_code, 7);
  EXPECT_EQ(done.status.message, "rank-1 exited with code 7");
}

TEST_F(NodeAgentTest, ARootAgentRunsPodsAsNobodyOrTheUserTheyNameInADirTheyCanWrite) {
  if (geteuid() != 0) GTEST_SKIP() << "only a root agent switches users";
  allow_root_pods_ = false;
  NewAgent();
  api::Pod nobody = ShellPod("nobody", "node-a", "touch written && id -u && id -g");
  nobody.spec.template_.security_context = {};
  api::Pod named = ShellPod("named", "node-a", "touch written && id -u && id -g");
  named.spec.template_.security_context.run_as_user = 1234;
  named.spec.template_.security_context.run_as_group = 4321;
  store::Object nobody_created = Create(nobody);
  store::Object named_created = Create(named);
  EXPECT_EQ(RunUntilTerminal(nobody_created).status.phase, api::PodPhase::kSucceeded);
  EXPECT_EQ(RunUntilTerminal(named_created).status.phase, api::PodPhase::kSucceeded);
  EXPECT_EQ(ReadFileOrEmpty(runtime_->PodDir(nobody_created.uid) + "/logs/main.log"),
            "65534\n65534\n");
  EXPECT_EQ(ReadFileOrEmpty(runtime_->PodDir(named_created.uid) + "/logs/main.log"),
            "1234\n4321\n");
}

TEST_F(NodeAgentTest, APodAskingForRootFailsWithTheReasonUnlessTheNodeAllowsRootPods) {
  if (geteuid() != 0) GTEST_SKIP() << "only a root agent switches users";
  allow_root_pods_ = false;
  NewAgent();
  api::Pod root = ShellPod("root", "node-a", "id -u");
  root.spec.template_.security_context = {};
  root.spec.template_.security_context.run_as_non_root = false;
  store::Object created = Create(root);
  api::Pod refused = RunUntilTerminal(created);
  EXPECT_EQ(refused.status.phase, api::PodPhase::kFailed);
  EXPECT_EQ(refused.status.reason, "StartError");
  EXPECT_THAT(refused.status.message,
              HasSubstr("asks to run as root (securityContext.runAsNonRoot: false) but this node "
                        "does not allow root pods"));

  allow_root_pods_ = true;
  NewAgent();
  root.metadata.name = "root-allowed";
  store::Object allowed = Create(root);
  EXPECT_EQ(RunUntilTerminal(allowed).status.phase, api::PodPhase::kSucceeded);
  EXPECT_EQ(ReadFileOrEmpty(runtime_->PodDir(allowed.uid) + "/logs/main.log"), "0\n");
}

TEST_F(NodeAgentTest, AStopRequestEndsTheProcessesWithTheReason) {
  store::Object created = Create(ShellPod("victim", "node-a", "exec sleep 60"));
  RunPass();
  ASSERT_EQ(Get("victim").status.phase, api::PodPhase::kRunning);
  Annotate("victim", api::kStopRequestedAnnotation, std::string(api::kStopPreempted));
  Annotate("victim", api::kStopMessageAnnotation, "preempted by team-b/big");
  RunPass();
  api::Pod stopped = Get("victim");
  EXPECT_EQ(stopped.status.phase, api::PodPhase::kFailed);
  EXPECT_EQ(stopped.status.reason, api::kStopPreempted);
  EXPECT_EQ(stopped.status.message,
            "preempted by team-b/big; main was killed by signal 15 (SIGTERM)");
  EXPECT_TRUE(runtime_->GetStatus(created.uid).has_value())
      << "forgotten only once the pod is terminal in the store";
  RunPass();
  EXPECT_FALSE(runtime_->GetStatus(created.uid).has_value());
}

TEST_F(NodeAgentTest, ADeletedPodsProcessesAreStopped) {
  store::Object created = Create(ShellPod("gone", "node-a", "exec sleep 60"));
  RunPass();
  Result<PodStatus> running = runtime_->GetStatus(created.uid);
  ASSERT_TRUE(running.has_value());
  pid_t pid = running->processes[0].pid;
  ASSERT_TRUE(store_->Delete(created.key).has_value());
  RunPass();
  EXPECT_TRUE(testing::WaitForProcessEnd(pid, kWait));
  EXPECT_FALSE(runtime_->GetStatus(created.uid).has_value());
}

TEST_F(NodeAgentTest, ARestartedAgentAdoptsLiveProcessesAndReportsLostOnes) {
  store::Object live = Create(ShellPod("live", "node-a", "exec sleep 60"));
  store::Object ended = Create(ShellPod("ended", "node-a", "exit 0"));
  RunPass();
  (void)runtime_->WaitForExit(ended.uid, kWait);
  // A pod the store says is Running but that no runtime knows of.
  api::Pod orphan = ShellPod("orphan", "node-a", "exit 0");
  orphan.status.phase = api::PodPhase::kRunning;
  Create(orphan);

  NewAgent();
  RunPass();
  EXPECT_EQ(Get("live").status.phase, api::PodPhase::kRunning);
  EXPECT_EQ(Get("ended").status.phase, api::PodPhase::kSucceeded);
  api::Pod lost = Get("orphan");
  EXPECT_EQ(lost.status.phase, api::PodPhase::kFailed);
  EXPECT_EQ(lost.status.reason, "ProcessesLost");

  // The adopted pod is supervised: a stop request ends it.
  Annotate("live", api::kStopRequestedAnnotation, std::string(api::kStopJobDeleted));
  RunPass();
  EXPECT_EQ(Get("live").status.phase, api::PodPhase::kFailed);
}

TEST_F(NodeAgentTest, ReportsTheLastCheckpointOfTheJob) {
  // A checkpoint an earlier run of the job left: the watcher counts it from the start.
  std::string dir = data_.path() + "/checkpoints/default/ckpt";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/step-10") << "state";
  TimePoint written = TimePoint(std::chrono::seconds(1'800'000'000));
  std::filesystem::last_write_time(
      dir + "/step-10",
      std::filesystem::file_time_type::clock::from_sys(
          std::chrono::time_point_cast<std::chrono::system_clock::duration>(written)));
  store::Object created = Create(TrainingShellPod("ckpt", 0, 1, "exec sleep 60"));
  RunPass();
  EXPECT_EQ(Get("ckpt-worker-0").metadata.annotations[api::kLastCheckpointAnnotation],
            FormatRfc3339(written));
  // A newer checkpoint reported through the API (STRATA_CHECKPOINT_URL) is kept.
  std::string reported = FormatRfc3339(written + std::chrono::minutes(5));
  Annotate("ckpt-worker-0", api::kLastCheckpointAnnotation, reported);
  RunPass();
  EXPECT_EQ(Get("ckpt-worker-0").metadata.annotations[api::kLastCheckpointAnnotation], reported);
  ASSERT_TRUE(store_->Delete(created.key).has_value());
  RunPass();
}

TEST_F(NodeAgentTest, AReplicaWorkerGetsItsPortGroupAndMemoryShareButNoEndpoint) {
  CreateNode();
  std::string out = data_.File("env");
  api::Pod pod = ReplicaPod(
      "chat-0-1", 1, 2,
      {"sh", "-c",
       "echo \"$1 $STRATA_PORT $PORT $LWS_LEADER_ADDRESS $LWS_GROUP_SIZE $LWS_WORKER_INDEX "
       "$STRATA_GPU_MEMORY_FRACTION $CUDA_VISIBLE_DEVICES\" > " +
           out,
       "sh", "$(STRATA_PORT)"});
  ShareGpu0(pod, "20Gi");
  api::Pod done = RunUntilTerminal(Create(pod));
  ASSERT_EQ(done.status.phase, api::PodPhase::kSucceeded) << done.status.message;
  const std::string port = done.metadata.annotations[api::kEnginePortAnnotation];
  ASSERT_FALSE(port.empty());
  EXPECT_EQ(ReadFileOrEmpty(out), fmt::format("{0} {0} {0} 10.0.0.9 2 1 0.25 0\n", port));
  EXPECT_EQ(done.metadata.annotations.count(api::kEndpointAnnotation), 0u)
      << "workers get no endpoint";
  EXPECT_EQ(done.metadata.annotations.count(api::kReadyAtAnnotation), 0u);
}

TEST_F(NodeAgentTest, VllmGetsThePortAndItsGpuMemoryUtilization) {
  CreateNode();
  std::string vllm = data_.File("vllm");  // a stand-in named like the real one
  WriteArgsScript(vllm, data_.File("args"));
  api::Pod pod = ReplicaPod("chat-0-0", 0, 1, {vllm, "serve", "meta-llama/Llama-3.1-8B"});
  ShareGpu0(pod, "40Gi");
  api::Pod done = RunUntilTerminal(Create(pod));
  ASSERT_EQ(done.status.phase, api::PodPhase::kSucceeded) << done.status.message;
  const std::string port = done.metadata.annotations[api::kEnginePortAnnotation];
  EXPECT_EQ(ReadFileOrEmpty(data_.File("args")), "serve\nmeta-llama/Llama-3.1-8B\n--port\n" + port +
                                                     "\n--gpu-memory-utilization=0.45\n");
  EXPECT_EQ(done.metadata.annotations[api::kEndpointAnnotation], "127.0.0.1:" + port);
}

TEST_F(NodeAgentTest, ALeaderIsReadyOnlyOnceItsEngineAnswersHealth) {
  CreateNode();
  std::string go = data_.File("go");
  std::string up = data_.File("up");
  testing::MakeFifo(go);
  testing::MakeFifo(up);
  // Waits for the test's go, listens on its port, tells the test, then answers /health 200.
  const char* server = R"(
import http.server, sys
open(sys.argv[1]).read()
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
    def log_message(self, *args):
        pass
httpd = http.server.HTTPServer(("127.0.0.1", int(sys.argv[3])), Health)
with open(sys.argv[2], "w") as ready:
    ready.write("up")
httpd.serve_forever()
)";
  store::Object created =
      Create(ReplicaPod("chat-0-0", 0, 1, {"python3", "-c", server, go, up, "$(PORT)"}));
  RunPass();
  api::Pod started = Get("chat-0-0");
  ASSERT_EQ(started.status.phase, api::PodPhase::kRunning) << started.status.message;
  const std::string port = started.metadata.annotations[api::kEnginePortAnnotation];
  EXPECT_EQ(started.metadata.annotations[api::kEndpointAnnotation], "127.0.0.1:" + port);
  RunPass();  // nothing listens yet: the probe's connection is refused
  EXPECT_EQ(Get("chat-0-0").metadata.annotations.count(api::kReadyAtAnnotation), 0u);

  testing::WriteFifo(go, "go");
  ASSERT_EQ(testing::ReadFifo(up, kWait), "up");
  clock_.Advance(std::chrono::seconds(40));
  RunPass();
  api::Pod ready = Get("chat-0-0");
  EXPECT_EQ(ready.metadata.annotations[api::kReadyAtAnnotation], FormatRfc3339Micro(clock_.Now()));
  EXPECT_EQ(ready.metadata.annotations[api::kEnginePortAnnotation], port) << "the port never moves";
  ASSERT_TRUE(store_->Delete(created.key).has_value());
  RunPass();
}

TEST_F(NodeAgentTest, AReplicaStartsOnThePortRecordedBeforeARestart) {
  CreateNode();
  std::string out = data_.File("port");
  api::Pod pod = ReplicaPod("chat-0-0", 0, 1, {"sh", "-c", "echo $PORT > " + out});
  // What an agent killed between recording the port and starting the engine leaves behind.
  pod.metadata.annotations[api::kEnginePortAnnotation] = "45999";
  api::Pod done = RunUntilTerminal(Create(pod));
  ASSERT_EQ(done.status.phase, api::PodPhase::kSucceeded) << done.status.message;
  EXPECT_EQ(ReadFileOrEmpty(out), "45999\n");
}

TEST_F(NodeAgentTest, AnAdoptedReplicaKeepsItsPortAndEndpoint) {
  CreateNode();
  // sh takes the appended "--port N" as its $0 and $1.
  store::Object created = Create(ReplicaPod("chat-0-0", 0, 1, {"sh", "-c", "exec sleep 60"}));
  RunPass();
  api::Pod before = Get("chat-0-0");
  ASSERT_EQ(before.status.phase, api::PodPhase::kRunning) << before.status.message;
  NewAgent();  // as after kill -9 of the agent: its engine runs on
  RunPass();
  api::Pod after = Get("chat-0-0");
  EXPECT_EQ(after.status.phase, api::PodPhase::kRunning)
      << after.status.reason << ": " << after.status.message;
  EXPECT_EQ(after.metadata.annotations[api::kEnginePortAnnotation],
            before.metadata.annotations[api::kEnginePortAnnotation]);
  EXPECT_EQ(after.metadata.annotations[api::kEndpointAnnotation],
            before.metadata.annotations[api::kEndpointAnnotation]);
  ASSERT_TRUE(store_->Delete(created.key).has_value());
  RunPass();
}

TEST_F(NodeAgentTest, EngineSimStandsInForVllmOnSimulatedGpus) {
  CreateNode();
  std::string strata = data_.File("strata");
  WriteArgsScript(strata, data_.File("args"));
  NewAgent(EngineSimSubstitution{.strata_path = strata,
                                 .startup_delay = std::chrono::seconds(3),
                                 .profile = "8b-h100",
                                 .time_scale = 1.0});
  api::Pod pod = ReplicaPod("chat-0-0", 0, 1, {"vllm", "serve", "meta-llama/Llama-3.1-8B"});
  ShareGpu0(pod, "40Gi");
  api::Pod done = RunUntilTerminal(Create(pod));
  ASSERT_EQ(done.status.phase, api::PodPhase::kSucceeded) << done.status.message;
  EXPECT_EQ(ReadFileOrEmpty(data_.File("args")),
            "engine-sim\n--model\nllama-8b\n--port\n" +
                done.metadata.annotations[api::kEnginePortAnnotation] +
                "\n--startup-delay\n3000ms\n--profile\n8b-h100\n");
  EXPECT_EQ(done.metadata.annotations[api::kEngineAnnotation],
            "simulated (engine-sim in place of vllm)");
}

TEST_F(NodeAgentTest, AReplicaWithoutGpusRunsItsOwnCommandOnSimulatedGpus) {
  CreateNode();
  std::string strata = data_.File("strata");
  WriteArgsScript(strata, data_.File("engine-sim-args"));
  NewAgent(EngineSimSubstitution{.strata_path = strata});
  std::string out = data_.File("out");
  api::Pod done =
      RunUntilTerminal(Create(ReplicaPod("web-0", 0, 1, {"sh", "-c", "echo own $PORT > " + out})));
  ASSERT_EQ(done.status.phase, api::PodPhase::kSucceeded) << done.status.message;
  EXPECT_EQ(ReadFileOrEmpty(out),
            "own " + done.metadata.annotations[api::kEnginePortAnnotation] + "\n");
  EXPECT_EQ(ReadFileOrEmpty(data_.File("engine-sim-args")), "");
  EXPECT_EQ(done.metadata.annotations.count(api::kEngineAnnotation), 0u);
}

TEST_F(NodeAgentTest, AReplicaThatCannotStartFailsNamingTheField) {
  CreateNode();
  // (A replica setting PORT, LWS_* or STRATA_* itself is refused by the API already:
  // testdata/manifests/bad.)
  api::Pod leaderless = ReplicaPod("leaderless", 1, 2, {"sleep", "60"});
  leaderless.metadata.annotations.erase(api::kLeaderAddressAnnotation);
  Create(leaderless);
  RunPass();
  api::Pod failed = Get("leaderless");
  EXPECT_EQ(failed.status.reason, "StartError");
  EXPECT_THAT(failed.status.message, HasSubstr("strata.dev/leader-address"));
}

}  // namespace
}  // namespace strata::node
