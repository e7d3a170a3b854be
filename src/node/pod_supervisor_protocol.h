#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::node {

// What the process runtime and a pod's supervisor (pod_supervisor.h) say to each other over the
// supervisor's stdin and stdout while the pod starts:
//   runtime -> supervisor: the SupervisorSpec, one JSON line;
//   supervisor -> runtime: the SupervisorReport, one JSON line (the workers it started, or why
//     it started none);
//   runtime -> supervisor: kSupervisorCommit once the runtime has recorded the pod durably.
// A supervisor that reads EOF instead of the commit kills its workers: a runtime that died
// before recording the pod would otherwise leave processes nobody knows about. Free functions.

inline constexpr char kSupervisorCommit[] = "commit\n";

// One worker process as the supervisor starts it.
struct SupervisedProcess {
  std::string name;
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "NAME=value", the whole environment
  std::string working_dir;
  std::string log_path;  // stdout and stderr, appended
};

struct SupervisorSpec {
  std::vector<SupervisedProcess> processes;
  std::string path;  // where a program named without a '/' is looked up
  // The identity the workers run as; unset: the supervisor's own.
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
  // The node's lease file (WriteLeaseFile); empty, or no such file: the pod is never fenced.
  std::string lease_file;
};

// The node's lease, for fencing: the node agent writes into `path` (atomically) the wall-clock
// time until which its last renewal with the control plane holds. A pod's supervisor that finds
// that time passed stops the pod's processes (SIGTERM, then SIGKILL after a grace): the control
// plane may start their replacements elsewhere once the node's lease lapsed, and two copies of
// the same work must not run. Unavailable on an I/O error.
Status WriteLeaseFile(const std::string& path, int64_t valid_until_ns);
// The time written by WriteLeaseFile; nullopt when there is no file or it is malformed.
std::optional<int64_t> ReadLeaseFile(const std::string& path);

struct StartedProcess {
  pid_t pid = 0;
  uint64_t start_time = 0;  // /proc/<pid>/stat field 22
};

struct SupervisorReport {
  std::string error;  // empty: every process started
  std::vector<StartedProcess> processes;
};

// The channel both sides speak over (a socket pair: the supervisor's stdin and stdout).
// Sends all of `text` (to a socket without SIGPIPE, else as write does); false when the peer
// is gone.
bool SendAll(int fd, std::string_view text);

// Reads lines from a file descriptor, keeping what it read past a line for the next one. Not
// thread-safe.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // The next line without its '\n', waiting until `deadline` at most (none: as long as it
  // takes); nullopt on EOF, an error or the deadline before a whole line.
  std::optional<std::string> Next(
      std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

 private:
  int fd_;
  std::string buffer_;
};

// The NULL-terminated char* array execve and posix_spawn take, pointing into `strings`.
std::vector<char*> CStrings(std::vector<std::string>& strings);

std::string EncodeSupervisorSpec(const SupervisorSpec& spec);
// InvalidArgument naming the field when `line` is not an encoded spec.
Result<SupervisorSpec> DecodeSupervisorSpec(const std::string& line);

std::string EncodeSupervisorReport(const SupervisorReport& report);
// InvalidArgument naming the field when `line` is not an encoded report.
Result<SupervisorReport> DecodeSupervisorReport(const std::string& line);

}  // namespace strata::node
