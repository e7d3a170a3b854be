#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "server/resource_catalog.h"

namespace strata::server {

// How `strata get`, `describe` and `top` show objects read from the REST API: tables with a
// few columns per kind that fit 80 columns for usual names, kubectl's layout (upper-case
// headers, columns separated by at least three spaces, AGE as "5m" / "3h" / "2d"). Pure
// functions of the JSON and `now`; thread-safe.

// One row per item. `with_namespace` adds a NAMESPACE column first (for -A).
std::string FormatTable(const ResourceType& type, const std::vector<nlohmann::json>& items,
                        bool with_namespace, TimePoint now);

// "45s", "12m", "3h", "20d": kubectl's short age of `timestamp` (RFC 3339) at `now`; "<unknown>"
// when it does not parse.
std::string ShortAge(const std::string& timestamp, TimePoint now);

// Every GPU of every node, one row each, with the pod holding it ("NAMESPACE/POD") or "-":
// `strata top nodes`. `pods` are all pods; terminal ones hold nothing.
std::string FormatGpuHolders(const std::vector<nlohmann::json>& nodes,
                             const std::vector<nlohmann::json>& pods);

// `strata describe`: the object's identity, its spec and status as YAML, what the scheduler
// said about it when pending (status.conditions and status.message), the pods of a node or of
// a job, and its events, oldest first.
std::string FormatDescription(const ResourceType& type, const nlohmann::json& object,
                              const std::vector<nlohmann::json>& related_pods,
                              const std::vector<nlohmann::json>& events, TimePoint now);

}  // namespace strata::server
