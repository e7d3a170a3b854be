#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::api {

// The sets of fields that server-side apply tracks per manager (Kubernetes'
// sigs.k8s.io/structured-merge-diff, reduced to what strata's kinds need). A field is named by
// its steps from the object's root, spelled as Kubernetes' fieldsV1 spells them: "f:spec" a map
// key, "k:{\"name\":\"main\"}" the item of a keyed list whose key fields have these values, and
// "." the keyed item itself. A list is keyed when api::MergingLists() names it (Kubernetes'
// x-kubernetes-list-type "map": containers and env by name, a node's conditions by type); every
// other list is atomic, one field whole, as a custom resource's lists are by default.
//
// Functions here are pure and thread-safe; objects are of a store kind ("Pod") in the form the
// REST API serves them.
using FieldPath = std::vector<std::string>;
using FieldSet = std::set<FieldPath>;

// Which part of an object a write owns: the object without its status (a write of the object
// itself), or its status (a write of the status subresource).
enum class FieldScope { kObject, kStatus };

// The fields `object` sets within `scope`: its leaves (a scalar, a null, an atomic list, an
// empty map) and each item of a keyed list ("." under its key) with the fields inside it. The
// server's bookkeeping (apiVersion, kind, metadata.name, .namespace, .uid, .resourceVersion,
// .generation, .creationTimestamp, .managedFields) is nobody's field.
FieldSet FieldsOf(std::string_view kind, const nlohmann::json& object, FieldScope scope);

// The value `path` names in `object`, or nullptr when it has none (for a "." step: the item).
const nlohmann::json* ValueAt(const nlohmann::json& object, const FieldPath& path);

// The fields of `after` that `before` does not have with the same value.
FieldSet ChangedFields(std::string_view kind, const nlohmann::json& before,
                       const nlohmann::json& after, FieldScope scope);

// Whether `path` is `prefix` or lies under it.
bool HasPrefix(const FieldPath& path, const FieldPath& prefix);

// Kubernetes' fieldsV1 form of `fields` ({"f:spec": {"f:replicas": {}}}), and back.
// FieldsFromV1 is InvalidArgument naming the step that is not f:, k:, v:, i: or ".".
nlohmann::json FieldsToV1(const FieldSet& fields);
Result<FieldSet> FieldsFromV1(const nlohmann::json& fields_v1);

// How Kubernetes names a field in an apply conflict: `.spec.containers[name="main"].image`.
std::string DescribeFieldPath(const FieldPath& path);

// Server-side apply's merge of `applied` over `live`: maps merge key by key, a keyed list's
// items merge with the live item of the same key (new ones are appended), anything else is
// replaced by the applied value.
nlohmann::json MergeApplied(std::string_view kind, const nlohmann::json& live,
                            const nlohmann::json& applied);

// Removes what `path` names from `object` (a keyed item whole, for a "." step); nothing when it
// is not there.
void RemoveField(nlohmann::json& object, const FieldPath& path);

}  // namespace strata::api
