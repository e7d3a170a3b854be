#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/resource_catalog.h"
#include "common/clock.h"

namespace strata::api {

// The columns an object of each kind is shown with, for people: `strata get` prints them, and the
// REST API serves them to kubectl as a meta.k8s.io Table (what `kubectl get` asks for). Read from
// objects as stored (strata's JSON). Pure functions of the JSON and `now`; thread-safe.

struct TableColumn {
  std::string name;  // "Restarts": kubectl and strata get print it upper-cased
  std::string description;
  int priority = 0;  // above 0: kubectl prints it with -o wide only
};

// The columns of `type`'s table: a name column first (Event: when it was last seen).
std::vector<TableColumn> TableColumns(const ResourceType& type);

// `item`'s cells, one per column of TableColumns(type). `pods` hold at least the item's own pods
// (others are passed over), needed only where TableReadsPods(type).
std::vector<std::string> TableCells(const ResourceType& type, const nlohmann::json& item,
                                    TimePoint now, const std::vector<nlohmann::json>& pods = {});

// Whether the table of `type` reads pods: a job's Ready column (its running pods out of its
// replicas).
bool TableReadsPods(const ResourceType& type);

// "45s", "12m", "3h", "20d": kubectl's short age of `timestamp` (RFC 3339) at `now`; "<unknown>"
// when it does not parse.
std::string ShortAge(const std::string& timestamp, TimePoint now);

// Whether a pod has ended (Succeeded or Failed) and so holds nothing.
bool PodJsonTerminal(const nlohmann::json& pod);

// Whether `pod` belongs to `owner` (a Job or a Service, by spec.owner and namespace).
bool PodOwnedBy(const nlohmann::json& pod, const nlohmann::json& owner, std::string_view kind);

// Kubernetes' server-side tables (meta.k8s.io/v1 Table), which kubectl asks for with
//   Accept: application/json;as=Table;v=v1;g=meta.k8s.io,...,application/json
// The Table version the first acceptable media type of `accept` asks for ("v1" or "v1beta1"),
// or nullopt where it asks for the object itself (plain JSON, */*, an empty header).
std::optional<std::string> TableVersionWanted(std::string_view accept);

// What a Table row carries of its object (the includeObject parameter): nothing, its metadata
// as a PartialObjectMetadata (Kubernetes' default), or the whole object.
enum class TableObject { kNone, kMetadata, kObject };
// The includeObject value `text` ("" is the default, Metadata); nullopt when unknown.
std::optional<TableObject> ParseTableObject(std::string_view text);

// A meta.k8s.io Table of `type` (`version` from TableVersionWanted) with a row per object of
// `objects` (as stored; a row's object is served as the API serves it), and `list_metadata`
// (resourceVersion, continue) as its metadata.
nlohmann::json MakeTable(const ResourceType& type, std::string_view version,
                         const std::vector<nlohmann::json>& objects, TableObject include,
                         nlohmann::json list_metadata, TimePoint now,
                         const std::vector<nlohmann::json>& pods = {});

}  // namespace strata::api
