#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/object_table.h"
#include "common/clock.h"

namespace strata::api {

// Kubernetes' batch/v1 Job as /apis/batch/v1 serves it from the native Job it decodes to: its
// entry among the source-served kinds (api/source_form.h). Pure functions; thread-safe.

// Kubernetes' defaults of a JobSpec where `spec` has none: parallelism 1, completions =
// parallelism, completionMode NonIndexed, backoffLimit 6, suspend false.
void DefaultBatchJobSpec(nlohmann::json& spec);

// The batch/v1 status of `stored`, a native Job, whose kept spec is `spec`:
//   active, ready      the replicas while the native Job runs (strata runs them as one group)
//   succeeded          the replicas once it succeeded; completedIndexes for an Indexed Job
//   failed             the group's failed runs: each restart, and the last run of a failed Job
//   startTime, completionTime (on success, as Kubernetes sets it)
//   conditions         Complete (reason CompletionsReached), Failed (BackoffLimitExceeded where
//                      strata's restarts ran out), Suspended while a suspended Job waits in its
//                      queue
nlohmann::json BatchJobStatus(const nlohmann::json& stored, const nlohmann::json& spec);

// Kubernetes' columns for `kubectl get jobs` between NAME and AGE: STATUS (Running, Complete,
// Failed, Suspended), COMPLETIONS ("1/2"), DURATION ("35s"; empty before it starts); and their
// cells for a Job as served, at `now`.
std::vector<TableColumn> BatchJobColumns();
std::vector<std::string> BatchJobCells(const nlohmann::json& served, TimePoint now);

}  // namespace strata::api
