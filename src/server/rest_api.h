#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/object_table.h"
#include "api/resource_catalog.h"
#include "api/served_form.h"
#include "common/clock.h"
#include "controller/node_leases.h"
#include "metrics/metrics.h"
#include "metrics/stats.h"
#include "net/http_message.h"
#include "server/access_tokens.h"
#include "server/api_listener.h"
#include "server/cluster_metrics.h"
#include "server/field_manager.h"
#include "server/list_selection.h"
#include "server/node_access.h"
#include "server/pod_logs.h"
#include "server/user_access.h"
#include "server/watch_stream.h"
#include "store/store.h"

namespace strata::server {

#define STRATA_APISERVER_STATS(COUNTER, GAUGE, HISTOGRAM)                              \
  COUNTER(requests_total, "REST API requests, by verb and HTTP code.", "verb", "code") \
  GAUGE(watches, "Watch streams open.")
STRATA_DECLARE_STATS(ApiServerStats, STRATA_APISERVER_STATS);

struct RestApiOptions {
  // The users' bearer tokens (access_tokens.h). A request without a token may read only the
  // public paths (IsPublicPath); one with a token that is neither a user's nor a node
  // credential is Unauthenticated; a scoped user reaches only its namespaces (AuthorizeUser).
  std::vector<AccessToken> tokens;
  // Where users find a credential, said in the Unauthenticated error ("the admin credential is
  // in /var/lib/strata/admin-token"); empty: nothing said.
  std::string credential_hint;
  // Where the node runtime of this machine keeps pods' logs ("<runtime data dir>/pods", see
  // PodLogs); empty: no pod runs here.
  std::string pod_logs_dir;
  // Join tokens with which node agents register and get node credentials (NodeAccess); empty:
  // joining is off.
  std::vector<std::string> join_tokens;
  // The strata version reported by /version.
  std::string version = "0.0.0";
  const Clock* clock = &RealClock::Instance();
  // A watch without timeoutSeconds ends after this long (clients reconnect).
  Duration default_watch_timeout = std::chrono::minutes(30);
  // The node Leases agents renew at api::NodeLeasePath (the embedded plane's); null: that path
  // is NotFound.
  controller::NodeLeases* node_leases = nullptr;
};

// The control plane's REST API over a Store, following the Kubernetes API conventions (see
// DESIGN.md "API conventions"): discovery (/api, /apis, /version, per-group resource lists,
// and the OpenAPI v3 documents at /openapi/v3: api/openapi_document.h),
// list / get / create (POST) / update (PUT, optimistic concurrency on resourceVersion) / patch
// (PATCH: merge, JSON and, for the core kinds, strategic merge patches; object_patch.h) /
// delete / watch per kind, the status subresource of pods and nodes (for a pod it also takes
// metadata.annotations, where its agent records start, finish and checkpoint times), pods' logs
// (PodLogs), pods' evictions (Evict), nodes' Leases (get and renew, in memory: NodeLease), and
// POST /apis/strata.dev/v1alpha1/apply, which creates or updates every object of a
// multi-document body (native or compatible kinds), one object at a time in the documents'
// order (the store has no transaction across objects): a write that fails names the documents
// applied before it, and applying the body again finishes the rest. Request bodies are decoded
// and validated by the api module first (a patch's result too); errors are Kubernetes Status
// objects naming the field, and a body that does not decode writes nothing. Objects are served in
// api::ToServedForm (the core kinds as apiVersion v1). /metrics serves the registry in Prometheus
// text, with the cluster's state kept from the control plane's cache (ClusterMetrics);
// /healthz answers "ok". Node agents join at NodeAccess::kJoinPath with a
// join token and then act with a node credential that NodeAccess limits to their own node.
//
// Owned by the control plane; `store`, `cache` (over the same store) and `registry` must
// outlive it. Handle may be called from several threads at once (the store is thread-safe).
class RestApi {
 public:
  RestApi(store::Store& store, cluster::Cache& cache, metrics::Registry& registry,
          RestApiOptions options);
  // Over a cache of its own of `store` (for a RestApi with no control plane around it: a test,
  // a benchmark).
  RestApi(store::Store& store, metrics::Registry& registry, RestApiOptions options);

  // Answers one request. Never fails: errors are responses.
  ApiReply Handle(const net::HttpRequest& request);

  static constexpr std::string_view kApplyPath = api::kApplyPath;

  // Who the request acts as: anonymous without an Authorization header, else the user or node
  // whose token it carries; Unauthenticated for a token that is neither. Other handlers of the
  // same listener use it to apply the API's rules to their own paths.
  Result<Caller> Authenticate(const net::HttpRequest& request) const;

 private:
  using Query = std::map<std::string, std::string>;

  Result<ApiReply> Route(const net::HttpRequest& request, const Query& query, const Caller& caller,
                         std::string* verb);
  // The registry's Prometheus text. `?families=A,B` renders only those families, and runs only
  // the collectors that produce one of them (Registry::RenderText); the cluster state's strata_*
  // families are brought up to date (ClusterMetrics::Refresh) only when the scrape asks for all
  // families or for one of strata_*.
  net::HttpResponse Metrics(const Query& query);

  // What a GET asks to be shown as (kubectl get's server-side printing): a meta.k8s.io Table
  // whose rows carry `include` of each object.
  struct TableRequest {
    std::string version;  // of meta.k8s.io: "v1" or "v1beta1"
    api::TableObject include = api::TableObject::kMetadata;
  };
  using TableWanted = std::optional<TableRequest>;
  // The Table the request's Accept header (api::TableVersionWanted) and includeObject parameter
  // ask for; nullopt where it asks for the objects themselves.
  static Result<TableWanted> TableRequested(const net::HttpRequest& request, const Query& query);
  // A Table of `objects` (as stored) of `path`'s kind, with `metadata` as its list metadata.
  Result<nlohmann::json> TableOf(const api::ResourcePath& path, const TableRequest& table,
                                 const std::vector<nlohmann::json>& objects,
                                 nlohmann::json metadata);

  // What a watch request asks for: what it selects, how its stream serves events, and where it
  // starts: after `from_version`, else from the current state (sent first as ADDED events, with
  // the watch-list's closing bookmark when `send_initial_events`).
  struct WatchRequest {
    Selected selected;
    WatchStreamOptions stream;
    std::string version;  // the resourceVersion asked for, as given
    std::optional<int64_t> from_version;
    bool send_initial_events = false;

    // The error of a store watch that could not start: Expired names the version asked for.
    Status StartError(const Status& error) const;
  };
  Result<WatchRequest> WatchRequested(const api::ResourcePath& path, const Query& query,
                                      const TableWanted& table, api::ServedForm form);

  // Objects are answered in the `form` the request's Accept header asks for
  // (api::ServedFormWanted): Kubernetes' v1 Pod unless strata's own form is asked for.
  Result<ApiReply> List(const api::ResourcePath& path, const Query& query, const TableWanted& table,
                        api::ServedForm form);
  Result<ApiReply> Watch(const api::ResourcePath& path, const Query& query,
                         const TableWanted& table, api::ServedForm form);
  Result<ApiReply> GetObject(const api::ResourcePath& path, const TableWanted& table,
                             api::ServedForm form);
  // Who a write of `path` is by (its field manager: server/field_manager.h) and when; an
  // `apply` must name its manager.
  Result<FieldWrite> WriteBy(const api::ResourcePath& path, const net::HttpRequest& request,
                             const Query& query, bool apply) const;
  // Writes record their fields in the object's metadata.managedFields as their manager's
  // Update; ?dryRun=All answers what would be written and writes nothing.
  Result<ApiReply> Create(const api::ResourcePath& path, const net::HttpRequest& request,
                          const Query& query, api::ServedForm form);
  Result<ApiReply> Replace(const api::ResourcePath& path, const net::HttpRequest& request,
                           const Query& query, api::ServedForm form);
  // A PUT of a pod in Kubernetes' v1 shape (api::StoredPodFromV1): its labels and annotations
  // are written, a change of its spec is refused naming the field.
  Result<ApiReply> ReplaceV1Pod(const api::ResourcePath& path, const nlohmann::json& pod,
                                const FieldWrite& who, bool dry_run, api::ServedForm form);
  Result<ApiReply> ReplaceStatus(const api::ResourcePath& path, const net::HttpRequest& request,
                                 const Query& query, api::ServedForm form);
  // Applies the request's patch (its Content-Type names the type) to the object, or to its
  // status subresource, and writes the result as Replace or ReplaceStatus would; a concurrent
  // write is patched over again, a stale resourceVersion in the patch is Conflict. An apply
  // patch is ApplyServerSide's.
  Result<ApiReply> Patch(const api::ResourcePath& path, const net::HttpRequest& request,
                         const Query& query, api::ServedForm form);
  // Kubernetes' server-side apply (PATCH with application/apply-patch+yaml, ?fieldManager=
  // required, ?force=true, ?dryRun=All): creates the object when absent, else merges the
  // applied configuration as server/field_manager.h says; Conflict names the fields another
  // manager owns. Of the object only, not its status subresource.
  Result<ApiReply> ApplyServerSide(const api::ResourcePath& path, const net::HttpRequest& request,
                                   const Query& query, api::ServedForm form);
  // POST pods/NAME/eviction (policy/v1 Eviction, what kubectl drain sends): a pod of a Job or a
  // Service is stopped with the reason api::kStopEvicted (its job is requeued whole, its replica
  // replaced, each placed again on schedulable nodes) and deleted by its controller once its
  // processes ended; a standalone or finished pod is deleted. The Eviction's deleteOptions are
  // accepted; the grace the processes get is the node agent's (--stop-grace).
  Result<ApiReply> Evict(const api::ResourcePath& path, const std::string& body);
  // A worker of the pod wrote a checkpoint now: the pod's last-checkpoint annotation (what
  // preemption cost reads) moves to the API's clock time.
  Result<ApiReply> RecordCheckpoint(const api::ResourcePath& path);
  Result<ApiReply> Delete(const api::ResourcePath& path, const Query& query, api::ServedForm form);
  // GET: the Lease of node `node_name` (NotFound before its first renewal since the start). PUT
  // renews it at the API's clock time, whatever renewTime the body carries; the body may be
  // empty or a Lease of that name. NotFound for a node that does not exist.
  Result<ApiReply> NodeLease(const std::string& method, const std::string& node_name,
                             const std::string& body);
  // Every object of the body is first checked against `caller`'s scope (AuthorizeUserObject);
  // one outside it refuses the whole body, with nothing written.
  Result<ApiReply> Apply(const net::HttpRequest& request, const Query& query, const Caller& caller);
  // Creates `object` or replaces what is stored (keeping its status and recording the write as
  // `who`'s Update); "created", "configured" or "unchanged".
  // `classes`: the WorkloadPriorityClasses of the same body, by name (GiveClassPriority).
  Result<std::string> ApplyObject(const store::Object& object, const FieldWrite& who,
                                  const std::map<std::string, int64_t>& classes, bool dry_run);
  // Kueue's LocalQueues (api/local_queue_form.h), each kept on the Queue its ClusterQueue
  // became (server/local_queue_handlers.cc): get, list and watch (Tables too), create, update,
  // patch (JSON merge and JSON patch) and delete; a server-side apply or a subresource is
  // refused saying so. A create names a ClusterQueue that exists.
  Result<ApiReply> ServeLocalQueue(const api::ResourcePath& path, const net::HttpRequest& request,
                                   const Query& query, std::string* verb);
  // A watch of the LocalQueues `path` selects, from the changes of Queues and Jobs
  // (server/local_queue_watcher.h).
  Result<ApiReply> WatchLocalQueues(const api::ResourcePath& path, const Query& query,
                                    const TableWanted& table);
  // The LocalQueues `path` selects (namespace, name, labelSelector, fieldSelector), as served
  // with their status, and the Queues' list version.
  Result<std::pair<std::vector<nlohmann::json>, int64_t>> SelectLocalQueues(
      const api::ResourcePath& path, const Query& query);
  // Writes `document` (a LocalQueue) onto the Queue it names: created when `create`, else over
  // the LocalQueue at `path` whose Queue was read at `current` (its resourceVersion is the
  // write's precondition). The LocalQueue as served after the write.
  Result<nlohmann::json> WriteLocalQueue(const api::ResourcePath& path, nlohmann::json document,
                                         const store::Object* current, bool dry_run);
  // Removes the LocalQueues of namespace `namespace_name` from the Queues that keep them, as
  // Kubernetes deletes a namespace's LocalQueues with it.
  Status ForgetLocalQueues(const std::string& namespace_name);
  // Creates the Namespace `name` unless it exists (or `name` is empty: a cluster-scoped object),
  // as a namespaced object is written into it.
  Status EnsureNamespace(const std::string& name);
  // Deletes every object in the namespace `name`: its Kueue LocalQueues, workloads, so that
  // their controllers make no new pods, then the pods and events.
  Status DeleteNamespaceContents(const std::string& name);

  std::unique_ptr<cluster::Cache> owned_cache_;  // set by the constructor without a cache
  store::Store& store_;
  cluster::Cache& cache_;
  metrics::Registry& registry_;
  RestApiOptions options_;
  NodeAccess node_access_;
  PodLogs pod_logs_;
  ApiServerStats stats_;
  ClusterMetrics cluster_metrics_;
};

// The query of a request target, percent-decoded: "/x?watch=1&labelSelector=a%3Db" gives
// {watch: 1, labelSelector: a=b}.
std::map<std::string, std::string> ParseQuery(std::string_view target);

}  // namespace strata::server
