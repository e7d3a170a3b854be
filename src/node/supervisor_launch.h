#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "node/pod_supervisor_protocol.h"

namespace strata::node {

// The runtime's side of starting one pod's supervisor (pod_supervisor.h): spawned from
// /proc/self/exe in a new session (also the pod's process group) with a socket for its stdin and
// stdout, handed the pod's spec, its report read; then committed (the pod is recorded, the
// supervisor goes on alone) or abandoned (it and everything it started are killed). Owned by
// ProcessRuntime::Start for the start's duration; not thread-safe. Destroying one that was
// neither committed nor abandoned abandons it.
class SupervisorLaunch {
 public:
  // Spawns the supervisor of the pod whose directory is `pod_dir`, its stderr appended to
  // `log_path`. Internal when it cannot be started.
  static Result<std::unique_ptr<SupervisorLaunch>> Spawn(const std::string& pod_dir,
                                                         const std::string& log_path);
  ~SupervisorLaunch();
  SupervisorLaunch(const SupervisorLaunch&) = delete;
  SupervisorLaunch& operator=(const SupervisorLaunch&) = delete;

  pid_t pid() const { return pid_; }

  // Sends `spec` and waits at most `timeout` for the report: the started processes, in the
  // spec's order. InvalidArgument with the supervisor's words when a process could not start
  // (it started none then); Internal when it ended or said nothing in time.
  Result<std::vector<StartedProcess>> StartProcesses(const SupervisorSpec& spec, Duration timeout);

  // Tells the supervisor that the pod is recorded; it supervises on its own from now on.
  // Returns false when it was gone already.
  bool Commit();

  // Kills the supervisor and everything it started (its process group) and reaps it.
  void Abandon();

 private:
  SupervisorLaunch(pid_t pid, int control_fd, std::string log_path)
      : pid_(pid), control_fd_(control_fd), log_path_(std::move(log_path)) {}
  void CloseControl();

  pid_t pid_;
  int control_fd_;
  std::string log_path_;
  bool settled_ = false;  // committed or abandoned
};

}  // namespace strata::node
