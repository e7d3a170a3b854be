#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::api {

// Kubernetes' strategic merge patch (application/strategic-merge-patch+json) of a native object
// of the core group (Pod, Node, Event), applied as kube-apiserver applies one to the same fields
// of its v1 types: maps merge recursively and a null deletes a key; a list whose v1 field
// declares patchStrategy "merge" merges its items by the field's patchMergeKey (an item whose key
// is not there yet is appended); every other list, and every other value, is replaced whole.
//
// The lists of strata's form that merge (k8s.io/api core/v1 types.go): a Pod's
// spec.template.env by name (a container's env) and a Node's status.conditions by type. A Pod's
// and a Node's other lists (tolerations, taints, command, args, assigned GPUs) are atomic, as
// Kubernetes declares tolerations and taints.
//
// Directives: {"$patch": "replace" | "merge" | "delete"} in a map; {"$patch": "delete", KEY: V}
// and {"$patch": "replace"} as items of a merging list; "$setElementOrder/LIST" beside a merging
// list (its items in that order first, the others after them as they were). Anything else that
// starts with '$' ($retainKeys and $deleteFromPrimitiveList/ name fields strata does not store),
// a merging list's item without its merge key and a merging list that is not a list are
// InvalidArgument naming the field ("spec.template.env[1]: ..."); nothing is applied then.
//
// REQUIRES: AcceptsStrategicMergePatch(kind). Pure; thread-safe.
Result<nlohmann::json> ApplyStrategicMergePatch(std::string_view kind,
                                                const nlohmann::json& original,
                                                const nlohmann::json& patch);

// A list of strata's form that Kubernetes' v1 type merges by key (patchStrategy "merge").
struct MergingList {
  std::string_view kind;
  std::string_view path;  // map keys from the object's root, joined by '.': "status.conditions"
  std::string_view merge_key;
};

// Every such list: what ApplyStrategicMergePatch merges by key, and what the OpenAPI documents
// mark with x-kubernetes-patch-merge-key so that kubectl computes its patches alike.
const std::vector<MergingList>& MergingLists();

// The kind a batch/v1 Job's patches name (a Job as /apis/batch/v1 serves it: api/source_form.h),
// apart from strata's own Job. Its lists merge as k8s.io/api batch/v1 and core/v1 declare them: a
// pod template's containers, and their env, by name.
inline constexpr std::string_view kBatchJobPatchKind = "Job.batch";

// Whether strategic merge patches apply to objects of `kind`: the kinds of the core group, whose
// fields Kubernetes' v1 types describe, and kBatchJobPatchKind. strata.dev's kinds take merge and
// JSON patches only, as custom resources do on Kubernetes.
bool AcceptsStrategicMergePatch(std::string_view kind);

}  // namespace strata::api
