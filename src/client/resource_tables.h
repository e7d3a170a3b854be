#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/resource_catalog.h"
#include "common/clock.h"

namespace strata::client {

// How `strata get` and `top` show objects read from the REST API: tables with a few columns
// per kind that fit 80 columns for usual names, kubectl's layout (upper-case headers, columns
// separated by at least three spaces, AGE as "5m" / "3h" / "2d"). Pure functions of the JSON
// and `now`; thread-safe.

using TableRow = std::vector<std::string>;

// `rows` under `header`, each column as wide as its widest cell, three spaces apart.
std::string RenderColumns(const TableRow& header, const std::vector<TableRow>& rows);

// Whether the table of `type` reads pods: a job's READY column (its running pods out of its
// replicas).
bool TableReadsPods(const api::ResourceType& type);

// One row per item. `with_namespace` adds a NAMESPACE column first (for -A). `pods` are every
// pod, needed only where TableReadsPods(type). `header` false leaves out the header line (a
// watch prints rows as they come).
std::string FormatTable(const api::ResourceType& type, const std::vector<nlohmann::json>& items,
                        bool with_namespace, TimePoint now,
                        const std::vector<nlohmann::json>& pods = {}, bool header = true);

// "45s", "12m", "3h", "20d": kubectl's short age of `timestamp` (RFC 3339) at `now`; "<unknown>"
// when it does not parse.
std::string ShortAge(const std::string& timestamp, TimePoint now);

// Every GPU of every node, one row each, with the pod holding it ("NAMESPACE/POD") or "-":
// `strata top nodes`. `pods` are all pods; terminal ones hold nothing.
std::string FormatGpuHolders(const std::vector<nlohmann::json>& nodes,
                             const std::vector<nlohmann::json>& pods);

// Whether a pod has ended (Succeeded or Failed) and so holds nothing.
bool PodJsonTerminal(const nlohmann::json& pod);

// Whether `pod` belongs to `owner` (a Job or a Service, by spec.owner and namespace).
bool PodOwnedBy(const nlohmann::json& pod, const nlohmann::json& owner, std::string_view kind);

}  // namespace strata::client
