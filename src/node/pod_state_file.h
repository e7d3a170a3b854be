#pragma once

#include <string>

#include "common/status.h"
#include "node/node_runtime.h"

namespace strata::node {

// The durable record of one pod on this machine: "<pod dir>/state.json", rewritten atomically
// (write to a temporary file, then rename) each time a process starts or ends, so that a
// restarted agent can adopt the pod's live processes (NodeRuntime::Adopt). Free functions;
// callers serialise writes for one pod.

// Writes `status` to `path`, durably (common/atomic_file.h). Unavailable naming the file on an
// I/O error.
Status WritePodStateFile(const std::string& path, const PodStatus& status);

// Reads a file written by WritePodStateFile. InvalidArgument naming the path and the field
// when it is malformed; NotFound when it does not exist.
Result<PodStatus> ReadPodStateFile(const std::string& path);

}  // namespace strata::node
