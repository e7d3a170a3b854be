#pragma once

#include <string>

#include "child_process.h"

// Prometheus' own linter over a metrics page: `promtool check metrics` from Debian's
// prometheus package, for the observability tests. Plain functions; thread-safe.
namespace strata::observe_test {

// Whether promtool is on PATH.
bool HavePromtool();

// What `promtool check metrics` said about `page` and how it exited (0: clean, 1: the page
// does not parse, 3: lint problems; -1 when it could not be run).
ProgramResult CheckMetrics(const std::string& page);

// Expects a clean page, or only the complaints about the names of the tools strata stands in
// for, which it keeps so that existing dashboards and alerts work unchanged: dcgm-exporter's
// counters ending in "_TOTAL", not "_total", and its labels UUID, modelName and Hostname;
// vLLM's "vllm:" prefix (a colon promtool reserves for recording rules).
void ExpectOnlyPeerNamingComplaints(const ProgramResult& result);

}  // namespace strata::observe_test
