#include "node/proc_table.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <string>

namespace strata::node {
namespace {

// Reads a whole /proc file (they report size 0, so read until EOF). Empty on failure.
std::string ReadProcFile(const std::string& path) {
  std::string content;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return content;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) content.append(buffer, n);
  close(fd);
  return content;
}

}  // namespace

std::optional<ProcInfo> ReadProcInfo(pid_t pid) {
  std::string stat = ReadProcFile("/proc/" + std::to_string(pid) + "/stat");
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so parse after the
  // last ')'.
  size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos || close_paren + 2 >= stat.size()) return std::nullopt;
  ProcInfo info;
  info.pid = pid;
  info.state = stat[close_paren + 2];
  // Fields after comm, numbered as in proc(5): 3 state, 4 ppid, 5 pgrp, ..., 22 starttime.
  const char* cursor = stat.data() + close_paren + 4;
  const char* end = stat.data() + stat.size();
  for (int field = 4; field <= 22 && cursor < end; ++field) {
    uint64_t value = 0;
    auto [next, ec] = std::from_chars(cursor, end, value);
    if (ec != std::errc()) {
      // Fields 4-22 are all decimal; a negative one (e.g. tty_pgrp -1) parses as signed.
      int64_t signed_value = 0;
      auto [signed_next, signed_ec] = std::from_chars(cursor, end, signed_value);
      if (signed_ec != std::errc()) return std::nullopt;
      next = signed_next;
    }
    if (field == 4) info.ppid = static_cast<pid_t>(value);
    if (field == 5) info.pgid = static_cast<pid_t>(value);
    if (field >= 14 && field <= 17) info.cpu_ticks += value;
    if (field == 22) {
      info.start_time = value;
      return info;
    }
    cursor = next + 1;
  }
  return std::nullopt;
}

Duration TicksToDuration(uint64_t ticks) {
  static const int64_t ticks_per_second = sysconf(_SC_CLK_TCK);
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(
      static_cast<double>(ticks) / static_cast<double>(ticks_per_second)));
}

std::optional<std::string> ProcessEnvValue(pid_t pid, std::string_view name) {
  std::string environ = ReadProcFile("/proc/" + std::to_string(pid) + "/environ");
  size_t begin = 0;
  while (begin < environ.size()) {
    size_t end = environ.find('\0', begin);
    if (end == std::string::npos) end = environ.size();
    std::string_view entry = std::string_view(environ).substr(begin, end - begin);
    if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=') {
      return std::string(entry.substr(name.size() + 1));
    }
    begin = end + 1;
  }
  return std::nullopt;
}

std::vector<pid_t> OwnChildren() {
  std::vector<pid_t> children;
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return children;
  while (dirent* task = readdir(tasks)) {
    if (task->d_name[0] == '.') continue;
    std::string list = ReadProcFile(std::string("/proc/self/task/") + task->d_name + "/children");
    const char* cursor = list.data();
    const char* end = list.data() + list.size();
    while (cursor < end) {
      pid_t pid = 0;
      auto [next, ec] = std::from_chars(cursor, end, pid);
      if (ec != std::errc()) break;
      children.push_back(pid);
      cursor = next + 1;
    }
  }
  closedir(tasks);
  return children;
}

std::vector<ProcInfo> FindPodProcesses(pid_t pgid, std::string_view env_name,
                                       std::string_view env_value) {
  std::vector<ProcInfo> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  const pid_t self = getpid();
  while (dirent* entry = readdir(proc)) {
    pid_t pid = 0;
    std::string_view name = entry->d_name;
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (ec != std::errc() || end != name.data() + name.size() || pid == self) continue;
    std::optional<ProcInfo> info = ReadProcInfo(pid);
    if (!info || info->state == 'Z' || info->state == 'X') continue;
    bool in_group = pgid > 0 && info->pgid == pgid;
    if (in_group || (!env_name.empty() && ProcessEnvValue(pid, env_name) == env_value)) {
      found.push_back(*info);
    }
  }
  closedir(proc);
  return found;
}

}  // namespace strata::node
