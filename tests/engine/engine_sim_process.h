#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace strata::testing {

// A `strata engine-sim` child process started on port 0 for a test. Owned by the test; the
// destructor stops it (SIGTERM) and reaps it. Not thread-safe.
class EngineSimProcess {
 public:
  // Starts $STRATA_BINARY_DIR/bin/strata engine-sim --port 0 --model `model` plus `extra_args`,
  // and reads the port from its first line ("listening on 127.0.0.1:PORT").
  static Result<EngineSimProcess> Start(const std::string& model,
                                        const std::vector<std::string>& extra_args);

  EngineSimProcess(EngineSimProcess&& other) noexcept;
  ~EngineSimProcess();

  int port() const { return port_; }
  // Sends SIGTERM and returns the exit status (-1 if it did not exit normally).
  int Stop();

 private:
  EngineSimProcess(pid_t pid, int stdout_fd) : pid_(pid), stdout_fd_(stdout_fd) {}
  pid_t pid_ = -1;
  // Kept open so that a later write to stdout does not kill the child with SIGPIPE.
  int stdout_fd_ = -1;
  int port_ = 0;
};

}  // namespace strata::testing
