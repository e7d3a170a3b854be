#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"

// A program the observability tests run beside the code under test (`strata up`, a gateway,
// an engine simulator, a Prometheus server): its output goes to a log file that the test
// reads for the line announcing its address. Owned by one test; not thread-safe.
namespace strata::observe_test {

class ChildProcess {
 public:
  ChildProcess() = default;
  // Stop(): a test that fails half-way leaves nothing running.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts `command` (its program found on PATH) with stdout and stderr appended to
  // `log_path`. Returns false when it cannot be started. REQUIRES: not started.
  bool Start(const std::vector<std::string>& command, std::string log_path);

  // Waits until a whole line of the log holds `marker` and returns what follows the marker on
  // that line; nullopt when the process exits or `timeout` passes first.
  std::optional<std::string> WaitForLine(std::string_view marker, Duration timeout);

  // What the process printed so far.
  std::string Log() const;

  // Sends SIGTERM, waits up to 10 s, then SIGKILL, and reaps it. Idempotent.
  void Stop();

 private:
  pid_t pid_ = -1;
  std::string log_path_;
};

// What a program run to its end printed (stdout and stderr together) and its exit code (-1
// when it could not be run or did not exit normally).
struct ProgramResult {
  int exit_code = -1;
  std::string output;
};

// Runs `shell_command` through /bin/sh to its end.
ProgramResult RunToEnd(const std::string& shell_command);

// The port of a kernel-chosen free loopback port, for programs that cannot report the port
// they bound (Prometheus). Another process may take it before the program binds it: callers
// retry on a bind failure.
int FreeLoopbackPort();

}  // namespace strata::observe_test
