#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"

namespace strata::node {

// What /proc/<pid>/stat says about a process that the runtime needs. `start_time` is field 22
// (clock ticks since boot): together with the pid it names one process for the life of the
// machine, so a recycled pid is never mistaken for the process that had it before.
struct ProcInfo {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgid = 0;
  char state = '?';  // 'R', 'S', 'Z' (zombie: exited, not yet reaped), ...
  uint64_t start_time = 0;
  // Fields 14-17: CPU time in user and kernel mode, its own and that of the children it has
  // waited for, in clock ticks (see TicksToDuration).
  uint64_t cpu_ticks = 0;
};

// The time `ticks` clock ticks of /proc/<pid>/stat stand for (sysconf(_SC_CLK_TCK) per second).
Duration TicksToDuration(uint64_t ticks);

// Reads /proc/<pid>/stat. Returns nullopt when the process does not exist (or vanished while
// being read). Thread-safe.
std::optional<ProcInfo> ReadProcInfo(pid_t pid);

// The value of variable `name` in /proc/<pid>/environ; nullopt when it is not set, or the
// process is gone, a zombie, or not readable by this user. Thread-safe.
std::optional<std::string> ProcessEnvValue(pid_t pid, std::string_view name);

// The children of this process (all its threads'), from /proc/self/task/*/children.
// Thread-safe.
std::vector<pid_t> OwnChildren();

// Every live (non-zombie) process, other than the caller, that is in process group `pgid`
// (when pgid > 0) or whose environment sets `env_name` to `env_value` (when env_name is not
// empty): the members of a
// pod, including descendants that left its process group (setsid, double fork) but kept the
// pod's marker variable. One pass over /proc; thread-safe.
std::vector<ProcInfo> FindPodProcesses(pid_t pgid, std::string_view env_name,
                                       std::string_view env_value);

}  // namespace strata::node
