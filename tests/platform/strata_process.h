#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"

// Runs the real `strata` binary for the platform tests: `strata up` as a long-lived server, and
// one-shot CLI verbs with their output and exit code.
namespace strata::platform_test {

// $STRATA_BINARY_DIR/bin/strata.
std::string StrataBinary();
// $STRATA_SOURCE_DIR (the repository, for examples/).
std::string SourceDir();

// The admin credential `strata up` recorded for `url` in the CLI's credentials
// (client/credentials.h), which the CLI finds by itself; empty when none is recorded.
std::string AdminTokenFor(const std::string& url);

// What a finished command printed and how it ended.
struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `strata ARGS...` to completion with `env` added to the environment ("NAME=value").
CommandResult RunStrata(const std::vector<std::string>& args,
                        const std::vector<std::string>& env = {});

// Runs `command` (its program found on PATH) to completion, like RunStrata.
CommandResult RunProgram(const std::vector<std::string>& command,
                         const std::vector<std::string>& env = {});

// A running `strata up` (or `strata agent`). Start waits for the line naming the API's address
// and keeps what was printed before it. The destructor stops the process (SIGTERM) and reaps it.
class UpProcess {
 public:
  UpProcess() = default;
  ~UpProcess();
  UpProcess(const UpProcess&) = delete;
  UpProcess& operator=(const UpProcess&) = delete;

  // Starts `strata up ARGS...`; returns false (with what it printed in output()) when it exits
  // or prints nothing for `timeout` before announcing its address.
  bool Start(const std::vector<std::string>& args, Duration timeout = std::chrono::seconds(60));
  // Starts `strata agent ARGS...`; returns false like Start when it does not say it joined.
  // url() and port() stay unset.
  bool StartAgent(const std::vector<std::string>& args,
                  Duration timeout = std::chrono::seconds(60));

  // Sends SIGKILL and reaps the process: a crash, with no chance to clean up.
  void Kill();
  // Sends SIGTERM and returns the exit status after the process ended.
  int Terminate();
  // Sends `signal` and returns at once.
  void Signal(int signal);
  // Waits for a process that is expected to exit on its own; returns its exit code.
  int WaitExit();

  // Reads the process's output (kept in output()) until a whole line holds `marker`, which may
  // have been printed already; returns the rest of that line, or nullopt when the process ends
  // or is silent for `timeout` first. Start and StartAgent wait so for their own line.
  std::optional<std::string> WaitForLine(std::string_view marker,
                                         Duration timeout = std::chrono::seconds(60));

  const std::string& url() const { return url_; }
  int port() const { return port_; }
  const std::string& output() const { return output_; }

 private:
  // Starts `strata ARGS...` and reads its output until a whole line holds `marker`; returns the
  // rest of that line, or nullopt when the process ends or is silent for `timeout` first.
  std::optional<std::string> Launch(const std::vector<std::string>& args, std::string_view marker,
                                    Duration timeout);

  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string output_;
  std::string url_;
  int port_ = 0;
};

}  // namespace strata::platform_test
