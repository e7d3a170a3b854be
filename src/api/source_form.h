#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "api/object_table.h"
#include "api/resource_catalog.h"
#include "common/clock.h"

namespace strata::api {

// Compatible kinds served at their own paths from the native objects they decode to
// (SourceServedTypes(): batch/v1 Jobs, jobset.x-k8s.io/v1alpha2 JobSets, kueue.x-k8s.io/v1beta2
// ClusterQueues, ResourceFlavors and WorkloadPriorityClasses, at v1beta1 too:
// KueueV1beta1Types()).
//
// Such a document is stored as the native object its decoder makes of it, so the scheduler and
// the controllers run it unchanged, and `kubectl apply -f` and `strata apply -f` of one document
// store one object. The decoder keeps what the native object cannot say back, the document's
// apiVersion, kind and spec, as compact JSON in the annotation kSourceAnnotation. The served form
// of such an object (ServedSourceForm) is that document with the native object's metadata (uid,
// resourceVersion, creationTimestamp, labels, annotations, managedFields) and a status of the
// document's kind mapped from the native object's. Only native objects whose kept source is of
// a served type's kind are served at its path; strata's own Jobs stay at strata.dev only. Writes
// at such a path decode the document again (its status is the server's and is dropped).
//
// A kind served at two versions (Kueue's) keeps its source at one, the storage version its
// decoder converts to (v1beta2); at the other version's path the served form is converted back
// (the entry's spec_at_version), as Kubernetes serves a CRD's versions through its conversion.
//
// A served kind is one entry of the table in source_form.cc: its type, its spec's defaults, its
// status mapping (none: the served form has no status), its table columns and the kind its
// strategic merge patches name. Pure functions; thread-safe.
//
// Each entry is a document that decodes to exactly one native object. Of Kueue's kinds, a
// ClusterQueue is one Queue and a ResourceFlavor one ResourceFlavor, so they are entries. A
// LocalQueue is no object of its own: it is a namespaced name on the Queue of its ClusterQueue
// (spec.localQueues, which workloads' kueue.x-k8s.io/queue-name labels resolve through), so it
// is served from that Queue by its own handlers (api/local_queue_form.h): a LocalQueue that
// became an object of its own would be a second home for the name the scheduler reads. A
// WorkloadPriorityClass is one strata WorkloadPriorityClass; its document has its fields at the
// top, not under spec (the entry's flat form). A Cohort without quota and a Topology store
// nothing (their decoders only check or link other documents) and are not served.

// The annotation that holds {"apiVersion","kind","spec"} of the document a native object was
// decoded from.
inline constexpr char kSourceAnnotation[] = "strata.dev/source";

// Whether `type` is one of SourceServedTypes() or another version of one (KueueV1beta1Types()).
bool IsSourceServedType(const ResourceType& type);

// kSourceAnnotation's value for a document of `type` whose spec is `spec`, with the kind's
// defaults where it has none (as kube-apiserver stores a Job), so that a document written back
// as served keeps the same source.
std::string SourceAnnotationValue(const ResourceType& type, const nlohmann::json& spec);

// The served type whose document `stored` (an object as the store keeps it) was decoded from:
// one whose kind's source it holds in a readable kSourceAnnotation; nullptr for any other.
const ResourceType* SourceTypeOf(const nlohmann::json& stored);

// Whether `stored` is served at `type`'s path: any object where `type` is no source-served type,
// else one SourceTypeOf names `type` (or the type it is another version of).
bool IsServedAt(const nlohmann::json& stored, const ResourceType& type);

// The served form of `stored` (see above); `stored` itself when SourceTypeOf is nullptr. At the
// version of `at` when that is another version of its type (Kueue's v1beta1: StorageVersionOf),
// else at the kept source's.
nlohmann::json ServedSourceForm(const nlohmann::json& stored, const ResourceType* at = nullptr);

// The kind a strategic merge patch of `type`'s objects names (api/strategic_merge_patch.h): its
// own for a kind Kubernetes builds in (batch/v1 Job); the type's kind, which takes none, for a
// custom resource's (JobSet), as on Kubernetes.
std::string_view PatchKindOf(const ResourceType& type);

// `kubectl get`'s columns for a source-served type, and the cells of one object as stored.
// REQUIRES: IsSourceServedType(type).
std::vector<TableColumn> SourceTableColumns(const ResourceType& type);
std::vector<std::string> SourceTableCells(const ResourceType& type, const nlohmann::json& stored,
                                          TimePoint now);

// Helpers of the kinds' entries.

// A condition of `type` with status True, as Kubernetes' controllers write one; `time` (RFC
// 3339) is its lastProbeTime and lastTransitionTime, none when empty.
nlohmann::json TrueCondition(std::string_view type, std::string_view reason,
                             std::string_view message, const std::string& time);
// The lastTransitionTime of `native_status`'s condition `type`, else `fallback`.
std::string ConditionTime(const nlohmann::json& native_status, std::string_view type,
                          const std::string& fallback);
// The condition of `type` with status True in `served`'s status, or nullptr.
const nlohmann::json* TrueConditionOf(const nlohmann::json& served, std::string_view type);

}  // namespace strata::api
