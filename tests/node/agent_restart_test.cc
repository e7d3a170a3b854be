// A node agent killed with SIGKILL leaves its workers running; a new agent (here: a runtime in
// the test process) adopts the live ones from the pod state file and reports the dead one lost.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>

#include "node/process_runtime.h"
#include "node/test_support.h"

namespace strata::node {
namespace {

using ::strata::node::testing::ProcessExists;
using ::strata::node::testing::TempDir;
using namespace std::chrono_literals;

// Starts the minimal agent with its stdout on a pipe; returns its pid and the pipe's read end.
std::pair<pid_t, FILE*> StartAgent(const std::string& data_dir, int workers) {
  int pipe_fds[2];
  EXPECT_EQ(pipe(pipe_fds), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::string workers_text = std::to_string(workers);
  std::string program = STRATA_RUNTIME_AGENT_PATH;
  char* argv[] = {program.data(), const_cast<char*>(data_dir.c_str()), workers_text.data(),
                  nullptr};
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv, environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  return {pid, fdopen(pipe_fds[0], "r")};
}

TEST(AgentRestartTest, ANewAgentAdoptsLiveWorkersAndReportsTheDeadOneLost) {
  TempDir data;
  ProcessRuntime::Options options;
  options.data_dir = data.path();
  // The test process becomes a subreaper here, so the minimal agent's workers are reparented to it
  // when that agent dies, as they would be to a supervisor (systemd) above a real agent.
  Result<std::unique_ptr<ProcessRuntime>> runtime = ProcessRuntime::Create(options);
  ASSERT_TRUE(runtime) << runtime.error().ToString();

  auto [agent, agent_out] = StartAgent(data.path(), 3);
  ASSERT_NE(agent_out, nullptr);
  // Blocks until the pod runs (or the agent exits); log lines may come first.
  bool started = false;
  char line[512];
  while (!started && fgets(line, sizeof line, agent_out) != nullptr) {
    started = std::string(line) == "started\n";
  }
  fclose(agent_out);
  ASSERT_EQ(kill(agent, SIGKILL), 0);
  int agent_status = 0;
  ASSERT_EQ(waitpid(agent, &agent_status, 0), agent);
  ASSERT_TRUE(started) << "the agent did not start its pod";
  ASSERT_TRUE(WIFSIGNALED(agent_status));

  std::vector<PodStatus> before = (*runtime)->Adopt();
  ASSERT_EQ(before.size(), 1u);
  // This runtime goes away too, and one worker dies while no agent watches.
  const pid_t dead = before[0].processes[0].pid;
  const pid_t alive1 = before[0].processes[1].pid;
  const pid_t alive2 = before[0].processes[2].pid;
  for (const ProcessStatus& process : before[0].processes) {
    EXPECT_EQ(process.state, ProcessState::kRunning) << process.name;
  }
  runtime->reset();
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
  EXPECT_EQ(stopped->processes[1].signal, SIGTERM);
  EXPECT_FALSE(ProcessExists(alive1));
  EXPECT_FALSE(ProcessExists(alive2));
}

}  // namespace
}  // namespace strata::node
