#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "node/node_runtime.h"

namespace strata::node {

// Per-pod CPU and memory limits through cgroup v2, where this process may manage its own
// cgroup subtree. Probe() decides once: the cgroup root must be a cgroup2 mount, this process's
// cgroup (from /proc/self/cgroup) must offer the cpu and memory controllers and be writable.
// Because cgroup v2 forbids processes in a cgroup that hands controllers to children, the agent
// moves itself into "<its cgroup>/agent" and creates pods under "<its cgroup>/strata-pods/<uid>".
// Where any of this is not possible, enabled() is false and reason() says why; the caller says
// so once and runs pods without limits.
//
// Probing changes this process's cgroup, so it happens once per process and root: every
// runtime shares the result. Immutable after the probe; thread-safe.
class CgroupLimits {
 public:
  // REQUIRES: `root` is where cgroups are mounted ("/sys/fs/cgroup"; tests pass others).
  static std::shared_ptr<const CgroupLimits> Probe(const std::string& root);

  bool enabled() const { return enabled_; }
  const std::string& reason() const { return reason_; }

  // Creates (or reuses) the pod's cgroup and writes its limits (0 = unlimited). Returns its
  // directory. Internal on a write error. REQUIRES: enabled().
  Result<std::string> CreatePodCgroup(const std::string& uid, const ResourceLimits& limits) const;

  // Moves `pid` into the pod's cgroup. A process that forked before this call leaves its child
  // outside; pods start with exec, so in practice nothing forks that early.
  Status AddProcess(const std::string& cgroup, pid_t pid) const;

  // The CPU time every process that was ever in the pod's cgroup has used (cpu.stat's
  // usage_usec). Internal when cpu.stat cannot be read or names no usage.
  Result<Duration> CpuUsage(const std::string& cgroup) const;

  // Kills every process left in the cgroup (cgroup.kill) and removes it when empty; best
  // effort, for Stop.
  void KillAndRemove(const std::string& cgroup) const;

 private:
  CgroupLimits(bool enabled, std::string reason, std::string pods_dir);
  static std::shared_ptr<const CgroupLimits> ProbeUncached(const std::string& root);

  const bool enabled_;
  const std::string reason_;
  const std::string pods_dir_;
};

}  // namespace strata::node
