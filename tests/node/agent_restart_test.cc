// A node agent killed with SIGKILL leaves its workers running under their pod's supervisor; a new
// agent (here: a runtime in the test process) adopts the live ones from the pod state file and
// learns how the others ended from the supervisor's exit records, or reports them lost when the
// supervisor was killed too.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include "node/process_runtime.h"
#include "node/test_support.h"

namespace strata::node {
namespace {

using ::strata::node::testing::ProcessExists;
using ::strata::node::testing::TempDir;
using ::strata::node::testing::WaitForProcessEnd;
using namespace std::chrono_literals;

// Starts the minimal agent with its stdout on a pipe; returns its pid and the pipe's read end.
std::pair<pid_t, FILE*> StartAgent(const std::string& data_dir, int workers, int lease_seconds) {
  int pipe_fds[2];
  EXPECT_EQ(pipe(pipe_fds), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::string workers_text = std::to_string(workers);
  std::string lease_text = std::to_string(lease_seconds);
  std::string program = STRATA_RUNTIME_AGENT_PATH;
  char* argv[] = {program.data(), const_cast<char*>(data_dir.c_str()), workers_text.data(),
                  lease_seconds > 0 ? lease_text.data() : nullptr, nullptr};
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv, environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  return {pid, fdopen(pipe_fds[0], "r")};
}

// Starts the minimal agent's pod of `workers` sleeping workers (with a node lease of
// `lease_seconds`; 0: none), kills the agent with SIGKILL, and returns the pod as a runtime in
// this process adopts it (that runtime is then destroyed).
PodStatus CrashAgentWithRunningPod(const ProcessRuntime::Options& options, int workers,
                                   int lease_seconds = 0) {
  auto [agent, agent_out] = StartAgent(options.data_dir, workers, lease_seconds);
  EXPECT_NE(agent_out, nullptr);
  // Blocks until the pod runs (or the agent exits); log lines may come first.
  bool started = false;
  char line[512];
  while (!started && fgets(line, sizeof line, agent_out) != nullptr) {
    started = std::string(line) == "started\n";
  }
  fclose(agent_out);
  EXPECT_EQ(kill(agent, SIGKILL), 0);
  int agent_status = 0;
  EXPECT_EQ(waitpid(agent, &agent_status, 0), agent);
  EXPECT_TRUE(started) << "the agent did not start its pod";
  EXPECT_TRUE(WIFSIGNALED(agent_status));

  Result<std::unique_ptr<ProcessRuntime>> runtime = ProcessRuntime::Create(options);
  EXPECT_TRUE(runtime) << runtime.error().ToString();
  std::vector<PodStatus> adopted = (*runtime)->Adopt();
  EXPECT_EQ(adopted.size(), 1u);
  if (lease_seconds == 0) {
    for (const ProcessStatus& process : adopted.at(0).processes) {
      EXPECT_EQ(process.state, ProcessState::kRunning) << process.name;
    }
  }
  return adopted.at(0);
}

TEST(AgentRestartTest, PodsOfAnAgentWhoseLeaseLapsedAreStoppedByTheirSupervisors) {
  TempDir data;
  ProcessRuntime::Options options;
  options.data_dir = data.path();
  Result<std::unique_ptr<ProcessRuntime>> runtime = ProcessRuntime::Create(options);
  ASSERT_TRUE(runtime) << runtime.error().ToString();
  // The agent renews once and dies: no new agent comes while its lease runs out.
  PodStatus before = CrashAgentWithRunningPod(options, 2, /*lease_seconds=*/1);
  for (const ProcessStatus& process : before.processes) {
    EXPECT_TRUE(WaitForProcessEnd(process.pid, 60s)) << process.name << " still runs";
  }

  Result<std::unique_ptr<ProcessRuntime>> restarted = ProcessRuntime::Create(options);
  ASSERT_TRUE(restarted) << restarted.error().ToString();
  ASSERT_EQ((*restarted)->Adopt().size(), 1u);
  Result<PodStatus> fenced = (*restarted)->WaitForExit("survivor", 60s);
  ASSERT_TRUE(fenced) << fenced.error().ToString();
  for (const ProcessStatus& process : fenced->processes) {
    EXPECT_EQ(process.state, ProcessState::kExited) << process.name;
    EXPECT_EQ(process.signal, SIGTERM) << process.name;
    EXPECT_TRUE(process.fenced) << process.name;
  }
}

TEST(AgentRestartTest, AWorkerThatEndsWhileNoAgentRunsHasItsTrueExitStatus) {
  TempDir data;
  ProcessRuntime::Options options;
  options.data_dir = data.path();
  // The test process becomes a subreaper here, so the minimal agent's supervisors are reparented
  // to it when that agent dies, as they would be to a supervisor (systemd) above a real agent.
  Result<std::unique_ptr<ProcessRuntime>> runtime = ProcessRuntime::Create(options);
  ASSERT_TRUE(runtime) << runtime.error().ToString();
  PodStatus before = CrashAgentWithRunningPod(options, 3);
  ASSERT_EQ(before.processes.size(), 3u);
  // No runtime watches while one worker is stopped from outside and ends.
  const pid_t ended = before.processes[0].pid;
  ASSERT_EQ(kill(ended, SIGTERM), 0);
  ASSERT_TRUE(WaitForProcessEnd(ended, 30s));

  Result<std::unique_ptr<ProcessRuntime>> restarted = ProcessRuntime::Create(options);
  ASSERT_TRUE(restarted) << restarted.error().ToString();
  std::vector<PodStatus> found = (*restarted)->Adopt();
  ASSERT_EQ(found.size(), 1u);
  // Its supervisor records the end a moment after the worker ends: before the adoption (read
  // from the record) or after it (seen as the record appears).
  Result<PodStatus> adopted = (*restarted)->GetStatus("survivor");
  for (auto deadline = std::chrono::steady_clock::now() + 30s;
       adopted && adopted->processes[0].state == ProcessState::kRunning &&
       std::chrono::steady_clock::now() < deadline;
       adopted = (*restarted)->GetStatus("survivor")) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(adopted);
  EXPECT_EQ(adopted->processes[0].state, ProcessState::kExited);
  EXPECT_EQ(adopted->processes[0].signal, SIGTERM);
  EXPECT_FALSE(adopted->processes[0].exit_code);
  EXPECT_EQ(adopted->processes[1].state, ProcessState::kRunning);

  ASSERT_TRUE((*restarted)->Stop("survivor", 10s).ok());
  Result<PodStatus> stopped = (*restarted)->GetStatus("survivor");
  ASSERT_TRUE(stopped);
  EXPECT_EQ(stopped->processes[0].signal, SIGTERM);
  EXPECT_EQ(stopped->processes[1].signal, SIGTERM);
  EXPECT_EQ(stopped->processes[2].signal, SIGTERM);
  for (const ProcessStatus& process : before.processes) EXPECT_FALSE(ProcessExists(process.pid));
}

TEST(AgentRestartTest, AWorkerThatEndsAfterItsSupervisorWasKilledIsReportedLost) {
  TempDir data;
  ProcessRuntime::Options options;
  options.data_dir = data.path();
  Result<std::unique_ptr<ProcessRuntime>> runtime = ProcessRuntime::Create(options);
  ASSERT_TRUE(runtime) << runtime.error().ToString();
  PodStatus before = CrashAgentWithRunningPod(options, 3);
  const pid_t dead = before.processes[0].pid;
  const pid_t alive1 = before.processes[1].pid;
  const pid_t alive2 = before.processes[2].pid;
  // The supervisor is killed by hand, then one worker dies while nothing records it.
  ASSERT_EQ(kill(before.supervisor_pid, SIGKILL), 0);
  ASSERT_EQ(waitpid(before.supervisor_pid, nullptr, 0), before.supervisor_pid);
  ASSERT_EQ(kill(dead, SIGKILL), 0);
  ASSERT_EQ(waitpid(dead, nullptr, 0), dead);  // reparented to us; reaped, so truly gone

  Result<std::unique_ptr<ProcessRuntime>> restarted = ProcessRuntime::Create(options);
  ASSERT_TRUE(restarted) << restarted.error().ToString();
  std::vector<PodStatus> adopted = (*restarted)->Adopt();
  ASSERT_EQ(adopted.size(), 1u);
  EXPECT_EQ(adopted[0].processes[0].state, ProcessState::kLost);
  EXPECT_EQ(adopted[0].processes[1].state, ProcessState::kRunning);
  EXPECT_EQ(adopted[0].processes[2].state, ProcessState::kRunning);

  ASSERT_TRUE((*restarted)->Stop("survivor", 10s).ok());
  Result<PodStatus> stopped = (*restarted)->GetStatus("survivor");
  ASSERT_TRUE(stopped);
  EXPECT_EQ(stopped->processes[0].state, ProcessState::kLost);
  EXPECT_EQ(stopped->processes[1].state, ProcessState::kExited);
  // Reparented to this process (a subreaper), so their status is still readable here.
  EXPECT_EQ(stopped->processes[1].signal, SIGTERM);
  EXPECT_FALSE(ProcessExists(alive1));
  EXPECT_FALSE(ProcessExists(alive2));
}

}  // namespace
}  // namespace strata::node
