#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "api/field_set.h"
#include "common/status.h"

namespace strata::server {

// Kubernetes' field management, which server-side apply rests on: every object's
// metadata.managedFields says, per manager and operation (Apply for server-side apply, Update
// for any other write), which fields (api/field_set.h) that manager set. Pure functions over
// objects in the form the REST API serves them; thread-safe.

// The manager that kubectl's client-side apply writes as; an apply that sets a field to the
// value its last-applied annotation holds may take that field from it (kubectl apply
// --server-side on an object that kubectl apply created), as kube-apiserver allows.
inline constexpr std::string_view kClientSideApplyManager = "kubectl-client-side-apply";
// kubectl's client-side apply record, which a server-side apply by kubectl keeps up to date.
inline constexpr std::string_view kLastAppliedAnnotation =
    "kubectl.kubernetes.io/last-applied-configuration";

// Who writes and when.
struct FieldWrite {
  std::string kind;         // the store kind: "Pod"
  std::string api_version;  // the served apiVersion: "v1", "strata.dev/v1alpha1"
  std::string manager;
  std::string time;  // RFC 3339
  api::FieldScope scope = api::FieldScope::kObject;
};

// The manager a request writes as: its ?fieldManager=, else the product of its User-Agent
// ("kubectl" of "kubectl/v1.37.2 (linux/amd64) kubernetes/abc"), as kube-apiserver names
// managers. InvalidArgument for a fieldManager longer than 128 characters; for an apply
// (`required`), also when the request names none.
Result<std::string> FieldManagerOf(const std::map<std::string, std::string>& query,
                                   std::string_view user_agent, bool required);

// The metadata.managedFields after `write` replaced `before` (nullptr: created it) with
// `after`, a write that is not an apply: the manager's Update entry gains the fields it
// changed, which every other entry loses; removed fields leave every entry. When `after` gives
// managedFields that differ from `before`'s, they are the list the write starts from (kubectl
// rewrites them so that server-side apply takes over from its client-side apply). Null when no
// entry is left. InvalidArgument naming the entry and field of a malformed list.
Result<nlohmann::json> ManagedFieldsAfterUpdate(const FieldWrite& write,
                                                const nlohmann::json* before,
                                                const nlohmann::json& after);

// Server-side apply of `applied` (a whole intent: apiVersion, kind, metadata.name and the
// fields the manager wants) over `live` (nullptr: the object is created). Returns the object to
// write, with its metadata.managedFields: `applied` merged over `live` (api::MergeApplied),
// without the fields the manager applied before and applies no more unless another manager
// owns them; the manager's Apply entry holds exactly the fields of `applied`. Conflict when
// `applied` sets a field that another manager owns to another value than it has, naming each
// such field and its manager, unless `force` (the field then changes hands). A server-side apply
// by kubectl keeps the last-applied annotation of an object that has one.
Result<nlohmann::json> ServerSideApply(const FieldWrite& write, bool force,
                                       const nlohmann::json* live, nlohmann::json applied);

}  // namespace strata::server
