#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::api {

// One kind the REST API serves, as Kubernetes discovery describes it. Pod, Node and Event live
// in the core group (`/api/v1`), the other native kinds in `strata.dev/v1alpha1`.
struct ResourceType {
  std::string_view kind;      // "Job": the kind served (the store's, unless store_kind says)
  std::string_view plural;    // "jobs": the path segment
  std::string_view singular;  // "job"
  std::vector<std::string_view> short_names;
  std::string_view group;  // "" for the core group, "strata.dev"
  std::string_view version;
  bool namespaced = false;
  // The store's kind where it is not `kind`: a compatible kind served from the native objects it
  // decodes to (a JobSet from its Job).
  std::string_view store_kind = {};

  // The kind the store keeps these objects as.
  std::string_view StoreKind() const { return store_kind.empty() ? kind : store_kind; }
  // "v1" or "strata.dev/v1alpha1".
  std::string GroupVersion() const;
  // "/api/v1" or "/apis/strata.dev/v1alpha1".
  std::string GroupVersionPath() const;
  // The path of one object ("/api/v1/namespaces/default/pods/p") or, with an empty name, of
  // the collection in `namespace_name` (every namespace when empty, for a namespaced kind).
  std::string Path(std::string_view namespace_name, std::string_view name) const;
};

inline constexpr std::string_view kStrataGroup = "strata.dev";
inline constexpr std::string_view kStrataVersion = "v1alpha1";

// Every served kind, core group first. Immutable; thread-safe.
const std::vector<ResourceType>& AllResourceTypes();

// The path of the multi-object apply endpoint.
inline constexpr std::string_view kApplyPath = "/apis/strata.dev/v1alpha1/apply";

// The type whose kind, plural, singular or short name is `name` (case-insensitive), as
// `strata get` and kubectl accept them ("jobs", "job", "Job", "po"). nullptr when unknown.
const ResourceType* FindResourceType(std::string_view name);

// Kubernetes' events.k8s.io/v1 Events: the store's Events (the core group's type) served
// read-only (get, list, watch) in that group's shape (api/events_v1_form.h). Not among
// AllResourceTypes(), which holds one type per store kind.
const ResourceType& EventsV1Type();

// Compatible kinds served at their own paths from the native objects they decode to, in their
// documents' shape (api/source_form.h), with every verb: Kubernetes' batch/v1 Jobs and
// JobSet's jobset.x-k8s.io/v1alpha2 JobSets, both stored as strata's Jobs, and Kueue's
// kueue.x-k8s.io/v1beta2 ClusterQueues (stored as Queues) and ResourceFlavors (as strata's
// ResourceFlavors) and WorkloadPriorityClasses (as strata's WorkloadPriorityClasses, short name
// wpc). Not among AllResourceTypes(), which holds one type per store kind.
const ResourceType& BatchJobType();
const ResourceType& JobSetType();
const ResourceType& ClusterQueueType();
const ResourceType& KueueResourceFlavorType();
const ResourceType& KueueWorkloadPriorityClassType();
// Kueue's Cohorts, stored as Queues that only lend (spec.lendOnly): a Cohort's own quota.
const ResourceType& CohortType();
// All six, batch/v1 Jobs first.
const std::vector<const ResourceType*>& SourceServedTypes();

// Kueue's kueue.x-k8s.io/v1beta2 LocalQueues: no object of their own, each a name for a Queue
// kept on it (api/local_queue_form.h), served by their own handlers (every verb; a watch from
// the changes of Queues and Jobs). Not among SourceServedTypes().
const ResourceType& LocalQueueType();

// Kueue's kinds at kueue.x-k8s.io/v1beta1, the older version Kueue's CRDs still serve beside
// v1beta2 (their storage version, which discovery prefers): ClusterQueue, ResourceFlavor,
// LocalQueue and WorkloadPriorityClass. Each is another version of its v1beta2 type
// (StorageVersionOf): the same objects, served converted to v1beta1 (api/kueue_form.h,
// KueueSpecAtVersion) and written back converted to v1beta2, as Kueue's conversion webhook does; so
// a document applied at either version stores the same native object. Not among
// SourceServedTypes(), which holds one type per served kind.
const std::vector<const ResourceType*>& KueueV1beta1Types();

// The type whose objects `type` serves at another version (Kueue's v1beta1 ClusterQueue: the
// v1beta2 one), else `type` itself.
const ResourceType& StorageVersionOf(const ResourceType& type);

// What kube-apiserver warns of each request at `type`'s version when its CRD marks that version
// deprecated (Kueue's v1beta1, in Kueue's words); empty for any other.
std::string_view DeprecationWarning(const ResourceType& type);

// The type with this store kind ("Job"), or nullptr.
const ResourceType* FindResourceTypeByKind(std::string_view kind);

// A REST path taken apart: `/api/v1/namespaces/{ns}/pods/{name}`,
// `/apis/strata.dev/v1alpha1/queues/{name}`, `/api/v1/pods` (every namespace), ...
struct ResourcePath {
  const ResourceType* type = nullptr;
  std::optional<std::string> namespace_name;  // nullopt: every namespace, or cluster-scoped
  std::string name;                           // empty: the collection
  // "status", "scale" (which the API refuses), "log", "checkpoint" or "eviction" (pods), or
  // empty.
  std::string subresource;
};

// Parses a request path. Returns NotFound naming the path when it names no served resource
// (an unknown group, version or plural, or a namespace on a cluster-scoped kind).
Result<ResourcePath> ParseResourcePath(std::string_view path);

// Discovery documents, the shapes kubectl reads before any request:
//   /api                          APIVersions
//   /apis                         APIGroupList
//   /api/v1, /apis/batch/v1, /apis/kueue.x-k8s.io/v1beta2 (and v1beta1),
//   /apis/strata.dev/v1alpha1, /apis/events.k8s.io/v1, /apis/jobset.x-k8s.io/v1alpha2
//                                 APIResourceList
// The batch and kueue groups are listed before strata.dev: kubectl takes `jobs` and
// `resourceflavors` (`rf`) to mean the first group's, batch/v1's and Kueue's as on Kubernetes
// with Kueue (strata's Jobs are `sjob`, its own flavors resourceflavors.strata.dev).
// Kubernetes' category `all` (kubectl get all) holds its workloads as Kubernetes puts them
// there: Pods, batch/v1 Jobs, and strata's Services (its Deployments); strata's Jobs are in
// category `strata` only, since a batch/v1 Job is one of them too and would be listed twice.
//   /version                      version.Info
nlohmann::json CoreApiVersions();
nlohmann::json ApiGroupList();
// `group_version` is one of those; nullopt for any other.
std::optional<nlohmann::json> ApiResourceList(std::string_view group_version);
nlohmann::json VersionInfo(std::string_view strata_version);

}  // namespace strata::api
