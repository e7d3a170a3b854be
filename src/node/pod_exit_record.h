#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace strata::node {

// How one process of a pod ended, as its pod supervisor saw it when it reaped the process:
// "<pod dir>/exits/<process name>", written durably (a temporary file, fsync, rename, fsync of
// the directory) before the supervisor goes on, so that a node agent restarted after a crash
// reads the true exit status of processes that ended while it was down. Free functions; each
// file has one writer (the pod's supervisor).
struct ExitRecord {
  std::optional<int> exit_code;  // set when it called exit()
  std::optional<int> signal;     // set when a signal ended it
  int64_t end_time_ns = 0;       // wall clock when it was reaped, ns since the Unix epoch
  bool fenced = false;           // the supervisor stopped it because the node's lease lapsed
};

// "<pod_dir>/exits": the directory of a pod's exit records.
std::string ExitRecordDir(const std::string& pod_dir);

// Writes the record of process `name` into `dir`, durably (common/atomic_file.h). Unavailable
// naming the file on an I/O error.
Status WriteExitRecord(const std::string& dir, const std::string& name, const ExitRecord& record);

// "<pod_dir>/start-abandoned": left by a pod's supervisor that never got its runtime's commit
// (the runtime died between recording the pod and committing it). The supervisor writes it,
// durably, before it kills what it started, so a runtime that adopts the pod later knows that
// its processes never ran as a recorded pod: their end is no failure, and the pod is started
// again as if it never had been.
std::string AbandonedStartMarker(const std::string& pod_dir);

// Reads the record of process `name` from `dir`. NotFound when there is none; InvalidArgument
// naming the file and the field when it is malformed.
Result<ExitRecord> ReadExitRecord(const std::string& dir, const std::string& name);

}  // namespace strata::node
