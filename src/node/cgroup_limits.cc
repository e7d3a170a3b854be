#include "node/cgroup_limits.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace strata::node {

ResourceLimits PodLimits(const api::ResourceRequest& resources) {
  return {resources.EnforcedCpu().milli(), resources.EnforcedMemory().milli() / 1000};
}
namespace {

constexpr int64_t kCpuPeriodMicros = 100000;

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Writes `value` to a cgroup control file in one write(2), as the kernel expects.
Status WriteControl(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return InternalError(fmt::format("open {}: {}", path, std::strerror(errno)));
  ssize_t n = write(fd, value.data(), value.size());
  int saved = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    return InternalError(fmt::format("write \"{}\" to {}: {}", value, path, std::strerror(saved)));
  }
  return Status::Ok();
}

// This process's cgroup v2 path ("0::/a/b" in /proc/self/cgroup), or empty.
std::string OwnCgroupPath() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("0::")) return line.substr(3);
  }
  return "";
}

bool HasWord(const std::string& words, std::string_view word) {
  std::istringstream in(words);
  std::string each;
  while (in >> each) {
    if (each == word) return true;
  }
  return false;
}

Status MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return InternalError(fmt::format("mkdir {}: {}", path, std::strerror(errno)));
  }
  return Status::Ok();
}

// Makes `own` (this process's cgroup) hand cpu and memory to its children: moves this process
// into the leaf "own/agent" first, because a cgroup with member processes cannot.
Status Delegate(const std::string& own, std::string* pods_dir) {
  if (Status made = MakeDir(own + "/agent"); !made.ok()) return made;
  if (Status moved = WriteControl(own + "/agent/cgroup.procs", std::to_string(getpid()));
      !moved.ok()) {
    return moved;
  }
  if (Status enabled = WriteControl(own + "/cgroup.subtree_control", "+cpu +memory");
      !enabled.ok()) {
    return enabled;
  }
  *pods_dir = own + "/strata-pods";
  if (Status made = MakeDir(*pods_dir); !made.ok()) return made;
  return WriteControl(*pods_dir + "/cgroup.subtree_control", "+cpu +memory");
}

}  // namespace

CgroupLimits::CgroupLimits(bool enabled, std::string reason, std::string pods_dir)
    : enabled_(enabled), reason_(std::move(reason)), pods_dir_(std::move(pods_dir)) {}

std::shared_ptr<const CgroupLimits> CgroupLimits::Probe(const std::string& root) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const CgroupLimits>> probed;
  std::lock_guard lock(mu);
  std::shared_ptr<const CgroupLimits>& limits = probed[root];
  if (limits == nullptr) limits = ProbeUncached(root);
  return limits;
}

std::shared_ptr<const CgroupLimits> CgroupLimits::ProbeUncached(const std::string& root) {
  auto disabled = [](std::string why) {
    return std::shared_ptr<const CgroupLimits>(new CgroupLimits(
        false, "per-pod CPU and memory limits are not enforced: " + std::move(why), ""));
  };
  struct statfs fs_info;
  if (statfs(root.c_str(), &fs_info) != 0 ||
      static_cast<uint64_t>(fs_info.f_type) != CGROUP2_SUPER_MAGIC) {
    return disabled(fmt::format("{} is not a cgroup v2 mount (cgroup v1 or hybrid)", root));
  }
  std::string own_path = OwnCgroupPath();
  if (own_path.empty()) return disabled("/proc/self/cgroup names no cgroup v2 path");
  const std::string own = root + (own_path == "/" ? "" : own_path);
  std::string controllers = ReadFirstLine(own + "/cgroup.controllers");
  if (!HasWord(controllers, "cpu") || !HasWord(controllers, "memory")) {
    return disabled(fmt::format("{} does not offer the cpu and memory controllers", own));
  }
  if (access(own.c_str(), W_OK) != 0) return disabled(fmt::format("{} is not writable", own));
  std::string pods_dir;
  if (Status delegated = Delegate(own, &pods_dir); !delegated.ok()) {
    return disabled(delegated.message());
  }
  return std::shared_ptr<const CgroupLimits>(new CgroupLimits(true, "", pods_dir));
}

Result<std::string> CgroupLimits::CreatePodCgroup(const std::string& uid,
                                                  const ResourceLimits& limits) const {
  const std::string dir = pods_dir_ + "/" + uid;
  RETURN_IF_ERROR(MakeDir(dir));
  std::string cpu =
      limits.cpu_millis > 0
          ? fmt::format("{} {}", limits.cpu_millis * kCpuPeriodMicros / 1000, kCpuPeriodMicros)
          : fmt::format("max {}", kCpuPeriodMicros);
  RETURN_IF_ERROR(WriteControl(dir + "/cpu.max", cpu));
  std::string memory = limits.memory_bytes > 0 ? std::to_string(limits.memory_bytes) : "max";
  RETURN_IF_ERROR(WriteControl(dir + "/memory.max", memory));
  return dir;
}

Status CgroupLimits::AddProcess(const std::string& cgroup, pid_t pid) const {
  return WriteControl(cgroup + "/cgroup.procs", std::to_string(pid));
}

Result<Duration> CgroupLimits::CpuUsage(const std::string& cgroup) const {
  std::ifstream in(cgroup + "/cpu.stat");
  std::string key;
  int64_t value = 0;
  while (in >> key >> value) {
    if (key == "usage_usec") return std::chrono::microseconds(value);
  }
  return Err(InternalError(fmt::format("{}/cpu.stat: no usage_usec", cgroup)));
}

void CgroupLimits::KillAndRemove(const std::string& cgroup) const {
  // Without cgroup.kill (Linux < 5.14) the caller's signal sweep has already done the work.
  [[maybe_unused]] Status killed = WriteControl(cgroup + "/cgroup.kill", "1");
  rmdir(cgroup.c_str());
}

}  // namespace strata::node
