#include "node/process_runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>

#include "node/pod_exit_record.h"
#include "node/pod_state_file.h"
#include "node/pod_supervisor.h"
#include "node/pod_supervisor_protocol.h"
#include "node/proc_table.h"
#include "node/test_support.h"

namespace strata::node {
namespace {

using ::strata::node::testing::MakeFifo;
using ::strata::node::testing::ProcessExists;
using ::strata::node::testing::ReadFifo;
using ::strata::node::testing::ReadFileOrEmpty;
using ::strata::node::testing::TempDir;
using ::strata::node::testing::WaitForProcessEnd;
using ::strata::node::testing::WriteFifo;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

constexpr Duration kLongWait = 60s;

ProcessSpec Shell(std::string name, std::string script, api::Environment env = {}) {
  ProcessSpec process;
  process.name = std::move(name);
  process.argv = {"/bin/sh", "-c", std::move(script)};
  env["PATH"] = "/usr/bin:/bin";
  process.env = std::move(env);
  return process;
}

class ProcessRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override { runtime_ = NewRuntime(); }

  std::unique_ptr<ProcessRuntime> NewRuntime(int64_t log_max_bytes = 1 << 20) {
    ProcessRuntime::Options options;
    options.data_dir = data_.path();
    options.log_max_bytes = log_max_bytes;
    options.log_keep = 2;
    options.log_check_interval = 1h;  // rotation is driven by the tests
    Result<std::unique_ptr<ProcessRuntime>> runtime = ProcessRuntime::Create(options);
    EXPECT_TRUE(runtime) << runtime.error().ToString();
    return std::move(*runtime);
  }

  PodStatus RunToCompletion(const PodSpec& spec) {
    Status started = runtime_->Start(spec);
    EXPECT_TRUE(started.ok()) << started.ToString();
    Result<PodStatus> status = runtime_->WaitForExit(spec.uid, kLongWait);
    EXPECT_TRUE(status) << status.error().ToString();
    return *status;
  }

  TempDir data_;
  TempDir scratch_;
  std::unique_ptr<ProcessRuntime> runtime_;
};

TEST_F(ProcessRuntimeTest, RunsWithEnvironmentWorkingDirAndGpusAndRecordsExitCodes) {
  PodSpec spec;
  spec.uid = "pod-a";
  spec.name = "team-a/train-0";
  spec.gpu_indices = {2, 3};
  spec.processes.push_back(
      Shell("main",
            "echo \"$FOO $CUDA_VISIBLE_DEVICES $STRATA_POD_UID\"; pwd; echo oops >&2; "
            "exit 3",
            {{"FOO", "bar"}}));
  spec.processes[0].working_dir = scratch_.path();
  spec.processes.push_back(
      Shell("own-gpu", "echo $CUDA_VISIBLE_DEVICES", {{"CUDA_VISIBLE_DEVICES", "7"}}));
  PodStatus status = RunToCompletion(spec);
  ASSERT_EQ(status.processes.size(), 2u);
  EXPECT_EQ(status.processes[0].state, ProcessState::kExited);
  EXPECT_EQ(status.processes[0].exit_code, 3);
  EXPECT_FALSE(status.processes[0].signal);
  EXPECT_EQ(status.processes[1].exit_code, 0);
  EXPECT_FALSE(status.Succeeded());
  EXPECT_EQ(ReadFileOrEmpty(status.processes[0].log_path),
            "bar 2,3 pod-a\n" + scratch_.path() + "\noops\n");
  EXPECT_EQ(ReadFileOrEmpty(runtime_->PodDir("pod-a") + "/logs/own-gpu.log"), "7\n");
  // Its name, beside its directory, finds it as a later pod's previous instance.
  EXPECT_EQ(ReadFileOrEmpty(runtime_->PodDir("pod-a") + kPodNameSuffix), "team-a/train-0\n");
  // The pod's supervisor leads its process group.
  EXPECT_NE(status.supervisor_pid, 0);
  EXPECT_EQ(status.pgid, status.supervisor_pid);
}

TEST_F(ProcessRuntimeTest, RecordsTheSignalThatEndedAProcess) {
  PodSpec spec;
  spec.uid = "pod-b";
  spec.processes.push_back(Shell("main", "kill -9 $$"));
  PodStatus status = RunToCompletion(spec);
  EXPECT_EQ(status.processes[0].signal, SIGKILL);
  EXPECT_FALSE(status.processes[0].exit_code);
}

TEST_F(ProcessRuntimeTest, AProgramThatCannotRunStartsNothing) {
  PodSpec spec;
  spec.uid = "pod-c";
  spec.processes.push_back(Shell("first", "exec sleep 1000"));
  spec.processes.push_back({"second", {"/nonexistent/program"}, {}, ""});
  Status started = runtime_->Start(spec);
  EXPECT_EQ(started.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(started.message(),
              HasSubstr("process \"second\": cannot run \"/nonexistent/program\""));
  EXPECT_EQ(runtime_->GetStatus("pod-c").error().code(), StatusCode::kNotFound);
  EXPECT_THAT(FindPodProcesses(0, kPodUidVariable, "pod-c"), ::testing::IsEmpty());
}

TEST_F(ProcessRuntimeTest, RejectsBadSpecsNamingTheField) {
  PodSpec spec;
  spec.uid = "../escape";
  spec.processes.push_back(Shell("main", "true"));
  EXPECT_THAT(runtime_->Start(spec).message(), HasSubstr("uid \"../escape\" must be"));
  spec.uid = "ok";
  spec.processes.push_back(Shell("main", "true"));
  EXPECT_THAT(runtime_->Start(spec).message(),
              HasSubstr("processes[1].name \"main\" is used twice"));
  spec.processes.pop_back();
  spec.processes[0].argv.clear();
  EXPECT_THAT(runtime_->Start(spec).message(), HasSubstr("processes[0].argv is empty"));
}

TEST_F(ProcessRuntimeTest, StopSendsTermToTheGroup) {
  const std::string ready = scratch_.File("ready");
  MakeFifo(ready);
  PodSpec spec;
  spec.uid = "pod-d";
  spec.processes.push_back(Shell("main", "echo up > " + ready + "; exec sleep 1000"));
  ASSERT_TRUE(runtime_->Start(spec).ok());
  ASSERT_EQ(ReadFifo(ready, kLongWait), "up\n");
  ASSERT_TRUE(runtime_->Stop("pod-d", kLongWait).ok());
  Result<PodStatus> status = runtime_->GetStatus("pod-d");
  ASSERT_TRUE(status);
  EXPECT_FALSE(status->Running());
  EXPECT_EQ(status->processes[0].signal, SIGTERM);
}

TEST_F(ProcessRuntimeTest, StopKillsWhatIgnoresTermAfterTheGrace) {
  const std::string ready = scratch_.File("ready");
  MakeFifo(ready);
  PodSpec spec;
  spec.uid = "pod-e";
  spec.processes.push_back(
      Shell("stubborn", "trap '' TERM; echo up > " + ready + "; exec sleep 1000"));
  ASSERT_TRUE(runtime_->Start(spec).ok());
  ASSERT_EQ(ReadFifo(ready, kLongWait), "up\n");
  ASSERT_TRUE(runtime_->Stop("pod-e", 100ms).ok());
  EXPECT_EQ(runtime_->GetStatus("pod-e")->processes[0].signal, SIGKILL);
}

TEST_F(ProcessRuntimeTest, StopLeavesNoOrphanOfADoubleForkingChild) {
  const std::string ready = scratch_.File("ready");
  MakeFifo(ready);
  PodSpec spec;
  spec.uid = "pod-f";
  // The grandchild leaves the process group (setsid) and its parent exits, so it is orphaned.
  spec.processes.push_back(Shell("daemonizer", "( setsid sh -c 'trap \"\" TERM; echo $$ > " +
                                                   ready +
                                                   "; exec sleep 1000' & ) ; exec sleep 1000"));
  ASSERT_TRUE(runtime_->Start(spec).ok());
  std::string orphan_text = ReadFifo(ready, kLongWait);
  ASSERT_FALSE(orphan_text.empty());
  const pid_t orphan = std::stoi(orphan_text);
  std::optional<ProcInfo> info = ReadProcInfo(orphan);
  ASSERT_TRUE(info);
  EXPECT_NE(info->pgid, runtime_->GetStatus("pod-f")->pgid);

  ASSERT_TRUE(runtime_->Stop("pod-f", 100ms).ok());
  EXPECT_FALSE(ProcessExists(orphan)) << "orphan " << orphan << " survived the stop";
  EXPECT_THAT(FindPodProcesses(0, kPodUidVariable, "pod-f"), ::testing::IsEmpty());
}

TEST_F(ProcessRuntimeTest, ReapsADescendantThatOutlivedItsParentAndEndedLater) {
  const std::string ready = scratch_.File("ready");
  const std::string go = scratch_.File("go");
  MakeFifo(ready);
  MakeFifo(go);
  PodSpec spec;
  spec.uid = "pod-l";
  spec.processes.push_back(Shell("daemonizer", "( setsid sh -c 'echo $$ > " + ready +
                                                   "; read x < " + go + "' & ) ; exec sleep 1000"));
  ASSERT_TRUE(runtime_->Start(spec).ok());
  std::string orphan_text = ReadFifo(ready, kLongWait);
  ASSERT_FALSE(orphan_text.empty());
  const pid_t orphan = std::stoi(orphan_text);
  runtime_->ReapStrays();  // sees it alive, reparented to this process, with the pod's marker
  WriteFifo(go, "x\n");
  ASSERT_TRUE(WaitForProcessEnd(orphan, kLongWait));
  ASSERT_TRUE(ProcessExists(orphan)) << "a zombie until someone reaps it";
  runtime_->ReapStrays();
  EXPECT_FALSE(ProcessExists(orphan));
  ASSERT_TRUE(runtime_->Stop("pod-l", kLongWait).ok());
}

TEST_F(ProcessRuntimeTest, RotatesLogsWhileTheWriterKeepsAppending) {
  runtime_ = NewRuntime(/*log_max_bytes=*/1000);
  const std::string ready = scratch_.File("ready");
  const std::string go = scratch_.File("go");
  MakeFifo(ready);
  MakeFifo(go);
  PodSpec spec;
  spec.uid = "pod-g";
  spec.processes.push_back(Shell("chatty", "head -c 1500 /dev/zero | tr '\\0' a; echo up > " +
                                               ready + "; read line < " + go + "; printf bbb"));
  ASSERT_TRUE(runtime_->Start(spec).ok());
  ASSERT_EQ(ReadFifo(ready, kLongWait), "up\n");
  runtime_->RotateLogs();
  WriteFifo(go, "go\n");
  Result<PodStatus> status = runtime_->WaitForExit("pod-g", kLongWait);
  ASSERT_TRUE(status);
  const std::string log = status->processes[0].log_path;
  EXPECT_EQ(ReadFileOrEmpty(log + ".1"), std::string(1500, 'a'));
  EXPECT_EQ(ReadFileOrEmpty(log), "bbb");  // appended at offset 0 after the truncation
}

TEST_F(ProcessRuntimeTest, AdoptsLiveProcessesAfterTheRuntimeIsRecreated) {
  const std::string ready = scratch_.File("ready");
  MakeFifo(ready);
  PodSpec spec;
  spec.uid = "pod-h";
  spec.processes.push_back(Shell("done", "exit 4"));
  spec.processes.push_back(Shell("alive", "echo up > " + ready + "; exec sleep 1000"));
  ASSERT_TRUE(runtime_->Start(spec).ok());
  ASSERT_EQ(ReadFifo(ready, kLongWait), "up\n");
  const pid_t alive = runtime_->GetStatus("pod-h")->processes[1].pid;
  runtime_.reset();  // the agent goes away; its processes do not
  ASSERT_TRUE(ProcessExists(alive));

  runtime_ = NewRuntime();
  std::vector<PodStatus> adopted = runtime_->Adopt();
  ASSERT_EQ(adopted.size(), 1u);
  EXPECT_EQ(adopted[0].uid, "pod-h");
  EXPECT_EQ(adopted[0].processes[1].pid, alive);
  EXPECT_EQ(adopted[0].processes[1].state, ProcessState::kRunning);
  // "done" either ended under the first runtime (exit code recorded) or is a zombie that the
  // new runtime reaps; both ways its code is known.
  Result<PodStatus> first = runtime_->GetStatus("pod-h");
  ASSERT_TRUE(first);
  EXPECT_TRUE(runtime_->Adopt().empty()) << "a known pod is not adopted twice";

  ASSERT_TRUE(runtime_->Stop("pod-h", kLongWait).ok());
  Result<PodStatus> status = runtime_->GetStatus("pod-h");
  EXPECT_EQ(status->processes[0].exit_code, 4);
  EXPECT_EQ(status->processes[1].signal, SIGTERM);
  EXPECT_FALSE(ProcessExists(alive));
}

TEST_F(ProcessRuntimeTest, NeverAdoptsARecycledPidAndReportsItLost) {
  PodStatus recorded;
  recorded.uid = "pod-i";
  recorded.pgid = getpid();
  ProcessStatus impostor;
  impostor.name = "worker";
  impostor.pid = getpid();  // alive, but not the process that was recorded
  impostor.start_time = ReadProcInfo(getpid())->start_time + 1;
  recorded.processes.push_back(impostor);
  std::filesystem::create_directories(runtime_->PodDir("pod-i"));
  ASSERT_TRUE(WritePodStateFile(runtime_->PodDir("pod-i") + "/state.json", recorded).ok());

  std::vector<PodStatus> adopted = runtime_->Adopt();
  ASSERT_EQ(adopted.size(), 1u);
  EXPECT_EQ(adopted[0].processes[0].state, ProcessState::kLost);
  // Stopping the pod must not signal the innocent process (this test) that now has the pid.
  ASSERT_TRUE(runtime_->Stop("pod-i", 100ms).ok());
  EXPECT_EQ(runtime_->GetStatus("pod-i")->processes[0].state, ProcessState::kLost);
  EXPECT_EQ(ReadPodStateFile(runtime_->PodDir("pod-i") + "/state.json")->processes[0].state,
            ProcessState::kLost);
}

TEST_F(ProcessRuntimeTest, APodsGpusAreInItsStateFileForTheNextRuntime) {
  PodSpec spec;
  spec.uid = "pod-g";
  spec.gpu_indices = {2, 3};
  spec.processes.push_back(Shell("main", "exit 0"));
  PodStatus ended = RunToCompletion(spec);
  EXPECT_EQ(ended.gpu_indices, (std::vector<int>{2, 3}));
  Result<PodStatus> read = ReadPodStateFile(runtime_->PodDir("pod-g") + "/state.json");
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  EXPECT_EQ(read->gpu_indices, (std::vector<int>{2, 3})) << "what a restarted agent adopts";
  // A file of a runtime from before GPUs were recorded reads as a pod that holds none.
  PodStatus old;
  old.uid = "pod-h";
  const std::string path = scratch_.File("state.json");
  ASSERT_TRUE(WritePodStateFile(path, old).ok());
  ASSERT_TRUE(ReadPodStateFile(path).has_value());
  EXPECT_TRUE(ReadPodStateFile(path)->gpu_indices.empty());
}

TEST_F(ProcessRuntimeTest, APodWhoseStartItsSupervisorAbandonedIsStartedAgainNotAdopted) {
  // What a runtime killed between recording a pod and committing its supervisor leaves: the
  // pod's record, its processes gone without exit records, and the supervisor's marker.
  PodStatus recorded;
  recorded.uid = "pod-j";
  ProcessStatus gone;
  gone.name = "main";
  gone.pid = 1 << 22;  // above pid_max's default: no process
  gone.start_time = 1;
  recorded.processes.push_back(gone);
  const std::string dir = runtime_->PodDir("pod-j");
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WritePodStateFile(dir + "/state.json", recorded).ok());
  {
    std::ofstream marker(AbandonedStartMarker(dir));
    marker << "abandoned\n";
  }

  EXPECT_TRUE(runtime_->Adopt().empty()) << "a start that never completed is no pod to adopt";
  EXPECT_FALSE(runtime_->GetStatus("pod-j"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/state.json"));
  EXPECT_FALSE(std::filesystem::exists(AbandonedStartMarker(dir)));
  // And it starts as any pod this node never started.
  PodSpec spec;
  spec.uid = "pod-j";
  spec.processes.push_back(Shell("main", "exit 0"));
  EXPECT_TRUE(RunToCompletion(spec).processes[0].Succeeded());

  // Without the marker the same record is adopted, its process lost (the failure it is).
  ASSERT_TRUE(runtime_->Forget("pod-j").ok());
  ASSERT_TRUE(WritePodStateFile(dir + "/state.json", recorded).ok());
  std::vector<PodStatus> adopted = runtime_->Adopt();
  ASSERT_EQ(adopted.size(), 1u);
  EXPECT_EQ(adopted[0].processes[0].state, ProcessState::kLost);
}

TEST_F(ProcessRuntimeTest, ASupervisorThatNeverGetsItsCommitSaysSoAndStopsItsProcesses) {
  // The supervisor as the runtime spawns it (this binary, told so by its environment), whose
  // runtime sends the spec and then dies: its end of the channel closes without a commit.
  const std::string dir = runtime_->PodDir("pod-l");
  std::filesystem::create_directories(dir + "/logs");
  const std::string pidfile = scratch_.File("worker.pid");
  SupervisorSpec spec;
  spec.path = "/usr/bin:/bin";
  spec.processes.push_back({"main",
                            {"sh", "-c", "echo $$ > " + pidfile + "; exec sleep 600"},
                            {},
                            dir,
                            dir + "/logs/main.log"});
  const std::string spec_file = scratch_.File("spec");
  {
    std::ofstream out(spec_file);
    out << EncodeSupervisorSpec(spec);
  }
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  // The spec, then (a second later, the worker started) the end of the input.
  const std::string command = "(cat " + spec_file + "; sleep 1) | env " +
                              SupervisorEnvironment(dir).front() + " " + self + " >/dev/null 2>&1";
  EXPECT_NE(std::system(command.c_str()), 0);
  EXPECT_TRUE(std::filesystem::exists(AbandonedStartMarker(dir)));
  std::ifstream in(pidfile);
  pid_t worker = 0;
  ASSERT_TRUE(in >> worker) << "the worker never started";
  EXPECT_FALSE(ProcessExists(worker)) << "the supervisor left its worker running";
}

TEST_F(ProcessRuntimeTest, TellsTheOwnerAboutEachExit) {
  std::promise<std::pair<std::string, ProcessStatus>> exited;
  ProcessRuntime::Options options;
  options.data_dir = data_.path();
  options.on_exit = [&exited](const std::string& uid, const ProcessStatus& process) {
    exited.set_value({uid, process});
  };
  Result<std::unique_ptr<ProcessRuntime>> runtime = ProcessRuntime::Create(options);
  ASSERT_TRUE(runtime) << runtime.error().ToString();
  PodSpec spec;
  spec.uid = "pod-k";
  spec.processes.push_back(Shell("main", "exit 7"));
  ASSERT_TRUE((*runtime)->Start(spec).ok());
  std::future<std::pair<std::string, ProcessStatus>> report = exited.get_future();
  ASSERT_EQ(report.wait_for(kLongWait), std::future_status::ready);
  auto [uid, process] = report.get();
  EXPECT_EQ(uid, "pod-k");
  EXPECT_EQ(process.name, "main");
  EXPECT_EQ(process.exit_code, 7);
}

TEST_F(ProcessRuntimeTest, CpuTimeCountsThePodsProcessesAndTheirChildren) {
  PodSpec spinning;
  spinning.uid = "spinning";
  // The work happens in a child of the pod's process, as under a launcher.
  spinning.processes.push_back(Shell("main", "(while :; do :; done) & wait"));
  PodSpec sleeping;
  sleeping.uid = "sleeping";
  sleeping.processes.push_back(Shell("main", "exec sleep 600"));
  ASSERT_TRUE(runtime_->Start(spinning).ok());
  ASSERT_TRUE(runtime_->Start(sleeping).ok());
  // However loaded the machine, the spinning child gets 200 ms of CPU eventually.
  Result<Duration> spun = runtime_->CpuTime("spinning");
  for (TimePoint deadline = RealClock::Instance().Now() + kLongWait;
       spun && *spun < 200ms && RealClock::Instance().Now() < deadline;) {
    usleep(50 * 1000);
    spun = runtime_->CpuTime("spinning");
  }
  ASSERT_TRUE(spun) << spun.error().ToString();
  EXPECT_GE(*spun, 200ms);
  Result<Duration> slept = runtime_->CpuTime("sleeping");
  ASSERT_TRUE(slept) << slept.error().ToString();
  EXPECT_LT(*slept, 100ms);

  ASSERT_TRUE(runtime_->Stop("spinning", 1s).ok());
  ASSERT_TRUE(runtime_->Stop("sleeping", 1s).ok());
  EXPECT_EQ(runtime_->CpuTime("spinning").error().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(runtime_->CpuTime("unknown").error().code(), StatusCode::kNotFound);
}

TEST_F(ProcessRuntimeTest, ForgetRemovesAnEndedPod) {
  PodSpec spec;
  spec.uid = "pod-j";
  spec.processes.push_back(Shell("main", "true"));
  RunToCompletion(spec);
  ASSERT_TRUE(runtime_->Forget("pod-j").ok());
  EXPECT_EQ(runtime_->GetStatus("pod-j").error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(runtime_->Adopt().empty());
}

}  // namespace
}  // namespace strata::node
