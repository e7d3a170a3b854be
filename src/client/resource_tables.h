#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/resource_catalog.h"
#include "common/clock.h"

namespace strata::client {

// How `strata get` and `top` show objects read from the REST API: tables with the columns of
// api::TableColumns, that fit 80 columns for usual names, kubectl's layout (upper-case headers,
// columns separated by at least three spaces, AGE as "5m" / "3h" / "2d"). Pure functions of the
// JSON and `now`; thread-safe.

using TableRow = std::vector<std::string>;

// `rows` under `header`, each column as wide as its widest cell, three spaces apart.
std::string RenderColumns(const TableRow& header, const std::vector<TableRow>& rows);

// One row per item. `with_namespace` adds a NAMESPACE column first (for -A). `pods` are every
// pod, needed only where api::TableReadsPods(type). `header` false leaves out the header line (a
// watch prints rows as they come).
std::string FormatTable(const api::ResourceType& type, const std::vector<nlohmann::json>& items,
                        bool with_namespace, TimePoint now,
                        const std::vector<nlohmann::json>& pods = {}, bool header = true);

// Every GPU of every node, one row each, with the pod holding it ("NAMESPACE/POD") or "-":
// `strata top nodes`. `pods` are all pods; terminal ones hold nothing.
std::string FormatGpuHolders(const std::vector<nlohmann::json>& nodes,
                             const std::vector<nlohmann::json>& pods);

}  // namespace strata::client
