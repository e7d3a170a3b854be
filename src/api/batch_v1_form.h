#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/clock.h"

namespace strata::api {

// Kubernetes' batch/v1 Jobs, served at /apis/batch/v1 from the native Jobs they decode to.
//
// A batch/v1 Job is stored as the native strata.dev Job its decoder (decode_batch_v1.cc) makes of
// it, so the scheduler and the job controller run it unchanged, and `kubectl apply -f` and
// `strata apply -f` of one document store one object. The decoder keeps what the native Job
// cannot say back, the document's apiVersion, kind and spec, as compact JSON in the annotation
// kSourceAnnotation. The batch/v1 form of such a Job (ServedBatchV1Job) is that document with the
// native object's metadata (uid, resourceVersion, creationTimestamp, labels, annotations,
// managedFields) and a batch/v1 status mapped from the native Job's. Only native Jobs that carry
// the annotation are served there; strata's own Jobs stay at /apis/strata.dev/v1alpha1. Writes at
// /apis/batch/v1 decode the batch/v1 document again (its status is the server's and is dropped).
// Pure functions; thread-safe.

// The annotation that holds {"apiVersion","kind","spec"} of the document a native object was
// decoded from, where it is served back in that document's form.
inline constexpr char kSourceAnnotation[] = "strata.dev/source";
inline constexpr std::string_view kBatchGroup = "batch";
inline constexpr char kBatchV1ApiVersion[] = "batch/v1";

// kSourceAnnotation's value for a batch/v1 Job whose spec is `spec`, with Kubernetes' defaults
// where it has none (parallelism 1, completions = parallelism, completionMode NonIndexed,
// backoffLimit 6, suspend false), as kube-apiserver stores a Job: a Job written back as served
// keeps the same source.
std::string BatchV1Source(const nlohmann::json& spec);

// Whether `stored`, an object as the store keeps it, is a native Job decoded from a batch/v1 Job
// (it holds a readable kSourceAnnotation naming batch/v1 Job).
bool IsBatchV1Job(const nlohmann::json& stored);

// The batch/v1 form of `stored` (see above); `stored` itself when it is not IsBatchV1Job. Its
// status:
//   active, ready      the replicas while the native Job runs (strata runs them as one group)
//   succeeded          the replicas once it succeeded; completedIndexes for an Indexed Job
//   failed             the group's failed runs: each restart, and the last run of a failed Job
//   startTime, completionTime (on success, as Kubernetes sets it)
//   conditions         Complete (reason CompletionsReached), Failed (BackoffLimitExceeded where
//                      strata's restarts ran out), Suspended while a suspended Job waits in its
//                      queue
nlohmann::json ServedBatchV1Job(const nlohmann::json& stored);

// kubectl's columns for `kubectl get jobs` over a served batch/v1 Job, at `now`: STATUS (Running,
// Complete, Failed, Suspended), COMPLETIONS ("1/2"), DURATION ("35s"; empty before it starts).
std::string BatchJobStatusCell(const nlohmann::json& served);
std::string BatchJobCompletionsCell(const nlohmann::json& served);
std::string BatchJobDurationCell(const nlohmann::json& served, TimePoint now);

}  // namespace strata::api
