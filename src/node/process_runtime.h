#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "common/status.h"
#include "node/cgroup_limits.h"
#include "node/node_runtime.h"
#include "node/supervisor_launch.h"

namespace strata::node {

// The name of the marker variable the runtime puts in every process of a pod
// ("STRATA_POD_UID=<uid>"); descendants inherit it, which is how Stop finds processes that
// left the pod's process group.
inline constexpr char kPodUidVariable[] = "STRATA_POD_UID";

// NodeRuntime over real processes on this machine.
//
// Each pod gets a supervisor (pod_supervisor.h): a small process started (posix_spawn) in a new
// session that is also the pod's process group, in the pod's cgroup when it has one. The
// supervisor starts the pod's processes (fork and exec) with the given environment, working
// directory and identity, stdin from /dev/null, and stdout+stderr appended to
// "<data_dir>/pods/<uid>/logs/<name>.log" (rotated by size, keeping `log_keep` old files); it
// waits for them and records each exit status durably in "<data_dir>/pods/<uid>/exits/", so the
// status is known even when a process ends while no runtime runs. The runtime makes this
// process a child subreaper (PR_SET_CHILD_SUBREAPER), so processes that double-fork stay our
// descendants instead of escaping to init; Stop finds them by the pod's process group and by the
// STRATA_POD_UID marker in /proc/<pid>/environ, and reaps the ones reparented to us. Where
// cgroup v2 is writable (CgroupLimits), each pod also gets its own cgroup with its CPU and
// memory limits, and Stop ends with cgroup.kill, which catches even a descendant that left the
// group and scrubbed its environment.
//
// Supervision does not poll: one thread waits in epoll on inotify (the exit records as they
// appear) and on a pidfd per supervisor, and rewrites the pod's state file
// ("<data_dir>/pods/<uid>/state.json") so that a later runtime can Adopt the pod. Should a
// supervisor die before its processes (killed by hand), the runtime watches those processes'
// pidfds itself.
//
// Owned by the node agent; thread-safe. Destroying it stops supervision but leaves the
// processes and their supervisors running (a new runtime adopts them).
class ProcessRuntime final : public NodeRuntime {
 public:
  struct Options {
    std::string data_dir;
    int64_t log_max_bytes = int64_t{10} << 20;
    int log_keep = 3;
    Duration log_check_interval = std::chrono::seconds(1);
    std::string cgroup_root = "/sys/fs/cgroup";
    // Called on the supervisor thread, without locks held, each time a process ends.
    std::function<void(const std::string& uid, const ProcessStatus& process)> on_exit;
  };

  // Creates "<data_dir>/pods" and starts supervising. Internal when the directory, epoll or
  // the thread cannot be created; InvalidArgument for bad options.
  static Result<std::unique_ptr<ProcessRuntime>> Create(Options options);
  ~ProcessRuntime() override;

  Status Start(const PodSpec& spec) override;
  Status Stop(std::string_view uid, Duration grace) override;
  Result<PodStatus> GetStatus(std::string_view uid) const override;
  Result<Duration> CpuTime(std::string_view uid) const override;
  Result<PodStatus> WaitForExit(std::string_view uid, Duration timeout) override;
  std::vector<PodStatus> Adopt() override;
  Status Forget(std::string_view uid) override;

  // Rotates now every log file of a known pod that is over log_max_bytes. The supervisor also
  // does this every log_check_interval.
  void RotateLogs();

  // Reaps pod descendants that were reparented to this process (a subreaper) and have ended
  // since: every child of this process that no ProcessRuntime started and that carries a
  // pod's marker is remembered while it lives and reaped once it is a zombie. (One that is
  // reparented and ends between two calls stays a zombie until the pod's Stop.) The supervisor
  // does this every log_check_interval.
  void ReapStrays();

  // Why per-pod CPU and memory limits are not enforced on this machine (logged once per
  // process); empty when they are.
  const std::string& limits_notice() const { return cgroups_->reason(); }

  // The directory holding a pod's state file and logs.
  std::string PodDir(std::string_view uid) const;

  // Records that the node's lease with the control plane holds until `valid_until`: once that
  // time passes without another renewal, each pod's supervisor stops the pod's processes
  // (fencing; see WriteLeaseFile). A runtime whose owner never calls this never fences (an
  // embedded node shares its process with the control plane). Internal on an I/O error.
  Status RenewLease(TimePoint valid_until);

 private:
  struct Pod {
    PodStatus status;
    std::string state_path;
    std::string exits_dir;
    std::string cgroup;    // empty without cgroup limits
    int exits_watch = -1;  // the inotify watch of exits_dir while the supervisor lives
  };
  struct Watch {
    std::string uid;
    std::optional<size_t> process_index;  // nullopt: the pod's supervisor
    pid_t pid = 0;
  };
  // Processes that ended in one step, reported to on_exit once mu_ is released.
  using Ended = std::vector<std::pair<std::string, ProcessStatus>>;

  explicit ProcessRuntime(Options options);
  Status Init();
  void SuperviseLoop();
  void OnPidfdReadable(int pidfd);
  void OnExitRecordsChanged();
  // Starts the pod's supervisor and, through it, the pod's processes; returns the supervisor,
  // waiting for the commit once the pod is recorded.
  Result<std::unique_ptr<SupervisorLaunch>> SpawnPod(const PodSpec& spec, Pod* pod);
  // REQUIRES: mu_ held. Starts supervising through `pidfd` process `index` of the pod, or its
  // supervisor when `index` is nullopt.
  void WatchLocked(const std::string& uid, std::optional<size_t> index, int pidfd);
  // REQUIRES: mu_ held. Watches the pod's exit records; false when inotify refuses.
  bool WatchExitRecordsLocked(Pod& pod);
  void UnwatchExitRecordsLocked(Pod& pod);
  // REQUIRES: mu_ held. Applies the exit record of process `index` of a running process, if
  // there is one; returns whether there was.
  bool ApplyExitRecordLocked(Pod& pod, size_t index, Ended* ended);
  // REQUIRES: mu_ held. The pod's supervisor has ended: settles every process still running.
  void OnSupervisorEndedLocked(Pod& pod, Ended* ended);
  void PersistLocked(const Pod& pod);
  void Report(const Ended& ended);
  // Signals and waits until nothing of the pod is alive but its supervisor, which is left to
  // record how they ended (and killed only when it does not end by itself); see Stop.
  void TerminatePodProcesses(const std::string& uid, pid_t pgid, bool trust_group, pid_t supervisor,
                             uint64_t supervisor_start_time, Duration grace);

  Options options_;
  std::shared_ptr<const CgroupLimits> cgroups_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  int inotify_fd_ = -1;
  std::thread supervisor_;

  mutable std::mutex mu_;
  std::condition_variable exited_;
  std::map<std::string, Pod, std::less<>> pods_;
  std::unordered_map<int, Watch> watches_;             // pidfd -> process
  std::unordered_map<int, std::string> exit_watches_;  // inotify watch -> pod uid
  std::map<pid_t, uint64_t> strays_;  // reparented pod descendants: pid -> start time
  bool stopping_ = false;
};

}  // namespace strata::node
