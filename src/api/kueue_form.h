#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "api/object_table.h"
#include "common/clock.h"

namespace strata::api {

// Kueue's kueue.x-k8s.io/v1beta2 ClusterQueue and ResourceFlavor as /apis/kueue.x-k8s.io/v1beta2
// (and v1beta1, converted) serves them from the native Queue and ResourceFlavor they decode to
// (decode_kueue.cc): their entries among the source-served kinds (api/source_form.h). Pure
// functions; thread-safe.

// Kueue's defaults of a ClusterQueue's spec, as its CRD sets them (queueingStrategy, stopPolicy,
// flavorFungibility, preemption); a v1beta1 spec is converted to v1beta2, the version the kept
// source is in, as Kueue's conversion does: `cohort` becomes `cohortName`, flavorFungibility's
// whenCanBorrow Borrow becomes MayStopSearch. (v1beta1's admissionChecks, which v1beta2 moved
// into admissionChecksStrategy, are refused by the decoder: strata has no admission checks.)
void DefaultClusterQueueSpec(nlohmann::json& spec);

// A ClusterQueue's kept (v1beta2) spec at `version`: at v1beta1, `cohortName` is `cohort`. The
// other fields strata keeps read the same at both versions.
void ClusterQueueSpecAtVersion(nlohmann::json& spec, std::string_view version);

// The ClusterQueue status of `stored`, a native Queue, whose kept spec is `spec`, from the
// Queue's status as strata's scheduler writes it:
//   flavorsUsage, flavorsReservation  per flavor of spec.resourceGroups, per resource it covers
//                         (cpu, memory, nvidia.com/gpu): total used and borrowed (strata
//                         admits and places in one step: what is reserved is used)
//   pendingWorkloads      workloads waiting for admission
//   admittedWorkloads, reservingWorkloads  admitted workloads not yet finished
//   conditions            Active True (reason Ready): strata enforces every queue it stored
nlohmann::json ClusterQueueStatus(const nlohmann::json& stored, const nlohmann::json& spec);

// The columns Kueue's ClusterQueue CRD prints between NAME and AGE: COHORT, STRATEGY (wide),
// PENDING WORKLOADS, ADMITTED WORKLOADS (wide); and their cells for one as served.
std::vector<TableColumn> ClusterQueueColumns();
std::vector<std::string> ClusterQueueCells(const nlohmann::json& served, TimePoint now);

// A ResourceFlavor has no status in Kueue (null), and its CRD prints no column of its own.
nlohmann::json KueueResourceFlavorStatus(const nlohmann::json& stored, const nlohmann::json& spec);
std::vector<TableColumn> KueueResourceFlavorColumns();
std::vector<std::string> KueueResourceFlavorCells(const nlohmann::json& served, TimePoint now);

// A WorkloadPriorityClass has no spec in Kueue: its value and description are top-level
// fields, kept as the source's spec and served at the top (the source kind's flat form). It
// has no status; its CRD prints VALUE.
nlohmann::json WorkloadPriorityClassStatus(const nlohmann::json& stored,
                                           const nlohmann::json& spec);
std::vector<TableColumn> WorkloadPriorityClassColumns();
std::vector<std::string> WorkloadPriorityClassCells(const nlohmann::json& served, TimePoint now);

// A Cohort is served as written (its kept spec); Kueue's status holds fair sharing only, which
// strata's one-level cohorts have none of, and its CRD prints no column of its own.
nlohmann::json CohortStatus(const nlohmann::json& stored, const nlohmann::json& spec);
std::vector<TableColumn> CohortColumns();
std::vector<std::string> CohortCells(const nlohmann::json& served, TimePoint now);

// The condition Active of a Kueue queue, True with reason Ready and `message`, since `time`.
nlohmann::json KueueActiveCondition(std::string_view message, const std::string& time);

}  // namespace strata::api
