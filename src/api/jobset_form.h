#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/object_table.h"
#include "common/clock.h"

namespace strata::api {

// JobSet's jobset.x-k8s.io/v1alpha2 JobSet as /apis/jobset.x-k8s.io/v1alpha2 serves it from the
// native Job it decodes to (decode_jobset.cc runs a JobSet as one group): its entry among the
// source-served kinds (api/source_form.h). Pure functions; thread-safe.

// The JobSet status of `stored`, a native Job, whose kept spec is `spec`:
//   replicatedJobsStatus  per replicated job (by name), its child Jobs: active and ready while
//                         the group runs, succeeded once it succeeded, failed once it failed
//   restarts              the group's restarts
//   terminalState         Completed or Failed once it ended
//   conditions            Completed (reason AllJobsCompleted), Failed (FailedJobs), Suspended
//                         while a suspended JobSet waits in its queue
nlohmann::json JobSetStatus(const nlohmann::json& stored, const nlohmann::json& spec);

// The columns JobSet's own CustomResourceDefinition prints between NAME and AGE: TERMINALSTATE,
// RESTARTS, COMPLETED, SUSPENDED; and their cells for a JobSet as served.
std::vector<TableColumn> JobSetColumns();
std::vector<std::string> JobSetCells(const nlohmann::json& served, TimePoint now);

}  // namespace strata::api
