#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace strata::node {

// Size-based rotation of a log file that a running process appends to (O_APPEND) and that the
// agent never reopens: "copy and truncate", as logrotate's copytruncate does. When `path` is
// larger than `max_bytes`, `path.(keep-1)` becomes `path.keep` (the oldest is dropped), ...,
// `path.1` becomes `path.2`, the content of `path` is copied to `path.1`, and `path` is
// truncated to zero; the writer's next append lands at offset 0. Lines written between the
// copy and the truncation are lost, which is the price of not interrupting the writer.
//
// Returns true when the file was rotated, false when it was small enough or absent; Internal
// on an I/O error. REQUIRES: keep >= 1, max_bytes > 0. Not thread-safe for the same path.
Result<bool> RotateLogIfLarger(const std::string& path, int64_t max_bytes, int keep);

}  // namespace strata::node
