#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/torchrun_env.h"
#include "api/workload.h"
#include "common/clock.h"
#include "common/status.h"

namespace strata::node {

// One process of a pod.
struct ProcessSpec {
  std::string name;               // unique within the pod; names its log file "<name>.log"
  std::vector<std::string> argv;  // argv[0] without a '/' is looked up in the agent's PATH
  api::Environment env;           // the whole environment: nothing is inherited from the agent
  std::string working_dir;        // empty: the pod's directory in the data dir
};

// Per-pod limits; 0 means unlimited. Enforced only where cgroup v2 is writable.
struct ResourceLimits {
  int64_t cpu_millis = 0;
  int64_t memory_bytes = 0;

  bool operator==(const ResourceLimits&) const = default;
};

// What a pod whose resources are `resources` may use: its cpu and memory limits, else what is
// reserved for it (api::ResourceRequest::EnforcedCpu); nothing asked: unlimited.
ResourceLimits PodLimits(const api::ResourceRequest& resources);

// What the node agent starts for one pod.
// Appended to a pod's directory, the file beside it that names the pod ("<namespace>/<name>",
// PodSpec::name): outside the directory, which the pod's own user may change.
inline constexpr char kPodNameSuffix[] = ".pod-name";

struct PodSpec {
  std::string uid;  // 1-128 of [A-Za-z0-9._-]; names the pod's directory
  // "<namespace>/<name>", recorded beside the pod's directory (kPodNameSuffix) so that the logs of
  // an earlier pod of the same name (a restarted group's, a replaced replica's) can be found:
  // `kubectl logs --previous`. Empty: not recorded.
  std::string name;
  std::vector<ProcessSpec> processes;
  // Sets CUDA_VISIBLE_DEVICES ("0,1") in every process whose env does not set it.
  std::vector<int> gpu_indices;
  ResourceLimits limits;
  // The identity the pod's processes run as; unset: the runtime's own. The runtime makes the
  // pod's directory and log files theirs.
  struct RunAs {
    uid_t uid = 0;
    gid_t gid = 0;
  };
  std::optional<RunAs> run_as;
};

enum class ProcessState {
  kRunning,
  kExited,  // see exit_code / signal
  kLost,    // was running when a previous agent died, and is gone (or its pid was recycled)
};

std::string_view ProcessStateName(ProcessState state);

struct ProcessStatus {
  std::string name;
  pid_t pid = 0;
  uint64_t start_time = 0;  // /proc/<pid>/stat field 22; with pid, identifies the process
  ProcessState state = ProcessState::kRunning;
  std::optional<int> exit_code;  // set when it called exit()
  std::optional<int> signal;     // set when a signal ended it
  // kExited with neither set: it ended while nothing could read its exit status (its pod's
  // supervisor was gone too).
  std::string log_path;
  int64_t end_time_ns = 0;  // wall clock when it ended, ns since the Unix epoch; 0: unknown
  bool fenced = false;      // stopped by its pod's supervisor because the node's lease lapsed

  bool Succeeded() const { return state == ProcessState::kExited && exit_code == 0; }
};

struct PodStatus {
  std::string uid;
  pid_t pgid = 0;  // the pod's process group
  // The pod's supervisor (pod_supervisor.h), which leads the group; 0 when the pod has none.
  pid_t supervisor_pid = 0;
  uint64_t supervisor_start_time = 0;
  std::vector<ProcessStatus> processes;
  // The GPUs the pod was started with (PodSpec::gpu_indices), kept in its state file so that a
  // restarted agent knows which GPUs its adopted processes hold.
  std::vector<int> gpu_indices;

  // True while any process is still running.
  bool Running() const;
  // True when every process exited with code 0.
  bool Succeeded() const;
};

// Starts, stops and observes the processes of pods on this machine. A seam named in DESIGN.md:
// ProcessRuntime is the real one. Owned by the node agent; implementations are thread-safe.
class NodeRuntime {
 public:
  virtual ~NodeRuntime() = default;

  // Starts every process of the pod, or none: on failure the ones already started are killed.
  // Returns InvalidArgument for a malformed spec or a program that cannot be executed (naming
  // the process), AlreadyExists when a pod with this uid is running.
  virtual Status Start(const PodSpec& spec) = 0;

  // Sends SIGTERM to every process of the pod (its process group, and descendants that left
  // the group but carry the pod's marker), waits up to `grace` for them to end, then SIGKILLs
  // what remains until nothing of the pod is left alive. Returns after every process of the
  // pod has ended and its status is recorded. OK for a pod that already ended; NotFound for an
  // unknown uid.
  virtual Status Stop(std::string_view uid, Duration grace) = 0;

  // The pod's current status, or NotFound.
  virtual Result<PodStatus> GetStatus(std::string_view uid) const = 0;

  // The CPU time (user and system) the pod's processes have used so far: where the pod has a
  // cgroup, everything that ran in it; otherwise its live processes in its process group and
  // the children they have waited for (so a process that ended, or that left the group, no
  // longer counts). FailedPrecondition when no process of the pod runs; NotFound for an unknown
  // uid.
  virtual Result<Duration> CpuTime(std::string_view uid) const = 0;

  // Blocks until no process of the pod is running, then returns its status. DeadlineExceeded
  // when `timeout` passes first; NotFound for an unknown uid.
  virtual Result<PodStatus> WaitForExit(std::string_view uid, Duration timeout) = 0;

  // Reads the pod records a previous runtime left in the data dir (e.g. before the agent was
  // killed) and takes over every recorded process that is still the same process (pid and
  // start time match): it is supervised from now on. A recorded running process that is gone,
  // or whose pid now belongs to another process, is reported kLost and never signalled.
  // Returns the status of every pod found; pods this runtime already knows are skipped.
  virtual std::vector<PodStatus> Adopt() = 0;

  // Drops an ended pod's record and its state file (logs stay). FailedPrecondition while it
  // runs, NotFound for an unknown uid.
  virtual Status Forget(std::string_view uid) = 0;
};

}  // namespace strata::node
