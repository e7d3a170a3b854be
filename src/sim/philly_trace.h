#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace strata::sim {

// Reader for the Microsoft Philly trace as the Pollux (OSDI'21) artifact publishes it:
// CSV `timestamp,duration,num_gpus,gpu_time,cluster` with a header row; the timestamp is
// "YYYY-MM-DD HH:MM:SS" (UTC), duration and gpu_time are seconds, cluster is the virtual cluster
// (a team). Columns are found by name, so their order does not matter and extra columns are
// ignored. Pure functions; thread-safe.

// One job of the trace.
struct PhillyJob {
  TimePoint submitted;
  double duration_s = 0;  // run time on its GPUs, > 0
  int gpus = 0;           // > 0
  std::string cluster;    // non-empty
};

// Parses the trace. `source` names the input in errors. Returns InvalidArgument as
// "source:line:column: message" (1-based; the column is the field's first byte) on a missing
// column, a row with the wrong number of fields, a bad timestamp, a duration or GPU count that is
// not a positive number, or an empty cluster. Blank lines are skipped. Jobs keep file order.
Result<std::vector<PhillyJob>> ParsePhillyTrace(std::string_view csv, std::string_view source);

// Reads and parses the file at `path` (errors name `path`). NotFound when it cannot be read.
Result<std::vector<PhillyJob>> ReadPhillyTrace(const std::string& path);

}  // namespace strata::sim
