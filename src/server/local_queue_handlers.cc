// Kueue's LocalQueues, served from the Queues that keep them (api/local_queue_form.h).
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "api/local_queue_form.h"
#include "api/manifest.h"
#include "api/resource_catalog.h"
#include "api/source_form.h"
#include "common/json_member.h"
#include "common/yaml_json.h"
#include "server/list_selection.h"
#include "server/local_queue_watcher.h"
#include "server/object_codec.h"
#include "server/object_patch.h"
#include "server/rest_api.h"

namespace strata::server {
namespace {

using Json = nlohmann::json;

// How often a write that raced another writer of the same Queue is read and tried again.
constexpr int kWriteAttempts = 5;

std::string Described(const std::string& name) {
  return std::string(api::LocalQueueType().plural) + "." +
         std::string(api::LocalQueueType().group) + " \"" + name + "\"";
}

bool DryRun(const std::map<std::string, std::string>& query) {
  auto it = query.find("dryRun");
  return it != query.end() && it->second == "All";
}

// Pending and admitted workloads per LocalQueue ("namespace/name"), of the Jobs naming it
// (api::LocalQueueWorkloadOf).
struct WorkloadCounts {
  std::map<std::string, std::pair<int64_t, int64_t>> by_queue;

  Json StatusOf(const Json& served) const {
    const Json& metadata = MemberOrNull(served, "metadata");
    auto it = by_queue.find(StringMemberOr(metadata, "namespace") + "/" +
                            StringMemberOr(metadata, "name"));
    const auto [pending, admitted] =
        it == by_queue.end() ? std::pair<int64_t, int64_t>{0, 0} : it->second;
    return api::LocalQueueStatus(pending, admitted, StringMemberOr(metadata, "creationTimestamp"));
  }
};

Result<WorkloadCounts> CountWorkloads(store::Store& store,
                                      const std::optional<std::string>& namespace_name) {
  store::Selection jobs;
  jobs.kind = "Job";
  jobs.namespace_name = namespace_name;
  ASSIGN_OR_RETURN(store::ListResult listed, store.List(jobs));
  WorkloadCounts counts;
  for (const store::Object& job : listed.items) {
    const api::LocalQueueWorkload workload = api::LocalQueueWorkloadOf(job.body);
    if (workload.local_queue.empty()) continue;
    auto& [pending, admitted] = counts.by_queue[workload.local_queue];
    pending += workload.pending ? 1 : 0;
    admitted += workload.admitted ? 1 : 0;
  }
  return counts;
}

// The Queue naming LocalQueue namespace_name/name, and the LocalQueue as served (no status).
struct FoundLocalQueue {
  store::Object queue;
  Json served;
};

Result<FoundLocalQueue> FindLocalQueue(store::Store& store, const std::string& namespace_name,
                                       const std::string& name) {
  store::Selection queues;
  queues.kind = "Queue";
  ASSIGN_OR_RETURN(store::ListResult listed, store.List(queues));
  for (store::Object& queue : listed.items) {
    if (!api::HasLocalQueue(queue.body, namespace_name, name)) continue;
    for (Json& served : api::ServedLocalQueues(queue.body)) {
      const Json& metadata = served["metadata"];
      if (metadata["namespace"] == namespace_name && metadata["name"] == name) {
        return FoundLocalQueue{std::move(queue), std::move(served)};
      }
    }
  }
  return Err(NotFoundError(Described(name) + " not found"));
}

// `served` (a LocalQueue as api::ServedLocalQueues serves it) at the version of `path`: Kueue's
// LocalQueue reads the same at v1beta1 and v1beta2, but for its apiVersion.
Json AtVersionOf(Json served, const api::ResourcePath& path) {
  served["apiVersion"] = path.type->GroupVersion();
  return served;
}

// The one object of a request's body, in JSON or YAML; null when it holds anything else.
Json RequestObject(const std::string& body) {
  Result<std::vector<YamlDocument>> documents = ParseYamlDocuments(body);
  if (!documents || documents->size() != 1) return Json();
  return std::move((*documents)[0].value);
}

// `body` as a LocalQueue document of `path`: its kind where it names none, its namespace the
// path's, its status dropped (the server's).
Result<Json> LocalQueueDocument(const api::ResourcePath& path, Json body) {
  if (!body.is_object()) {
    return Err(InvalidArgumentError("request body: expected a LocalQueue object"));
  }
  if (!body.contains("apiVersion") && !body.contains("kind")) {
    body["apiVersion"] = path.type->GroupVersion();
    body["kind"] = path.type->kind;
  }
  body.erase("status");
  const std::string namespace_name = path.namespace_name.value_or("default");
  Json& metadata = body["metadata"];
  if (!metadata.is_object()) {
    return Err(InvalidArgumentError("metadata: a LocalQueue needs metadata.name"));
  }
  if (!metadata.contains("namespace")) metadata["namespace"] = namespace_name;
  if (metadata["namespace"] != namespace_name) {
    return Err(InvalidArgumentError("metadata.namespace: " + metadata["namespace"].dump() +
                                    " does not match the namespace of the request path \"" +
                                    namespace_name + "\""));
  }
  // What the server set is not the writer's: the LocalQueue's bookkeeping is its Queue's.
  for (const char* field :
       {"resourceVersion", "creationTimestamp", "uid", "managedFields", "generation"}) {
    metadata.erase(field);
  }
  return body;
}

}  // namespace

Result<std::pair<std::vector<Json>, int64_t>> RestApi::SelectLocalQueues(
    const api::ResourcePath& path, const Query& query) {
  ASSIGN_OR_RETURN(Selected selected, SelectionFor(path, query));
  store::Selection queues;
  queues.kind = "Queue";
  ASSIGN_OR_RETURN(store::ListResult listed, store_.List(queues));
  ASSIGN_OR_RETURN(WorkloadCounts counts,
                   CountWorkloads(store_, selected.selection.namespace_name));
  std::vector<Json> items;
  for (const store::Object& queue : listed.items) {
    for (Json& served : api::ServedLocalQueues(queue.body)) {
      store::Object as_object;
      const Json& metadata = served["metadata"];
      as_object.key = {std::string(path.type->kind), StringMemberOr(metadata, "namespace"),
                       StringMemberOr(metadata, "name")};
      if (selected.selection.namespace_name &&
          as_object.key.namespace_name != *selected.selection.namespace_name) {
        continue;
      }
      for (const auto& [key, value] : MemberOrNull(metadata, "labels").items()) {
        if (value.is_string()) as_object.labels[key] = value.get<std::string>();
      }
      if (!selected.selection.labels.Matches(as_object.labels)) continue;
      served["status"] = counts.StatusOf(served);
      as_object.body = AtVersionOf(std::move(served), path);
      if (!selected.Matches(as_object)) continue;
      items.push_back(std::move(as_object.body));
    }
  }
  return std::pair{std::move(items), listed.resource_version};
}

Result<ApiReply> RestApi::WatchLocalQueues(const api::ResourcePath& path, const Query& query,
                                           const TableWanted& table) {
  ASSIGN_OR_RETURN(WatchRequest request,
                   WatchRequested(path, query, table, api::ServedForm::kKubernetes));
  const Selected& selected = request.selected;
  // The LocalQueues of the namespace and labels asked for, as Selected::Matches leaves those to
  // the store's selection.
  request.stream.matches = [selected](const store::Object& object) {
    if (selected.selection.namespace_name &&
        object.key.namespace_name != *selected.selection.namespace_name) {
      return false;
    }
    return selected.selection.labels.Matches(object.labels) && selected.Matches(object);
  };
  store::Selection queues;
  queues.kind = "Queue";
  store::Selection jobs;
  jobs.kind = "Job";
  jobs.namespace_name = selected.selection.namespace_name;
  ASSIGN_OR_RETURN(store::ListResult listed_queues, store_.List(queues));
  ASSIGN_OR_RETURN(store::ListResult listed_jobs, store_.List(jobs));
  // From a version asked for, the changes since are applied over the state listed now: each
  // object ends as listed, so what is sent ends where the store is.
  store::WatchOptions watch_queues{queues,
                                   request.from_version.value_or(listed_queues.resource_version)};
  store::WatchOptions watch_jobs{jobs, request.from_version.value_or(listed_jobs.resource_version)};
  Result<std::unique_ptr<store::Watcher>> queue_watcher = store_.Watch(watch_queues);
  if (!queue_watcher) return Err(request.StartError(queue_watcher.error()));
  Result<std::unique_ptr<store::Watcher>> job_watcher = store_.Watch(watch_jobs);
  if (!job_watcher) return Err(request.StartError(job_watcher.error()));
  auto watcher = std::make_unique<LocalQueueWatcher>(listed_queues.items, std::move(*queue_watcher),
                                                     listed_jobs.items, std::move(*job_watcher));
  if (!request.from_version) {
    for (store::Object& object : watcher->Current()) {
      if (request.stream.matches(object)) request.stream.initial.push_back(std::move(object));
    }
    if (request.send_initial_events) {
      request.stream.initial_version =
          std::min(listed_queues.resource_version, listed_jobs.resource_version);
    }
  }
  // Events (the initial ones too) at the version asked for.
  request.stream.present = [present = std::move(request.stream.present), path](const Json& object) {
    Json served = AtVersionOf(object, path);
    return present ? present(served) : served;
  };
  ApiReply reply;
  reply.response.status = 200;
  reply.response.headers = {{"Content-Type", "application/json"}};
  reply.stream = std::make_unique<WatchStream>(std::move(watcher), std::move(request.stream),
                                               stats_.watches.With());
  return reply;
}

Result<Json> RestApi::WriteLocalQueue(const api::ResourcePath& path, Json document,
                                      const store::Object* current, bool dry_run) {
  ASSIGN_OR_RETURN(document, LocalQueueDocument(path, std::move(document)));
  ASSIGN_OR_RETURN(api::LocalQueueLink link, api::DecodeLocalQueueObject(document));
  if (current != nullptr && link.name != path.name) {
    return Err(InvalidArgumentError("metadata.name: \"" + link.name +
                                    "\" does not match the name in the request path \"" +
                                    path.name + "\""));
  }
  store::Object queue;
  if (current != nullptr) {
    if (link.cluster_queue != current->key.name) {
      return Err(
          InvalidArgumentError("spec.clusterQueue: field is immutable (the LocalQueue "
                               "names ClusterQueue \"" +
                               current->key.name + "\")"));
    }
    queue = *current;
  } else {
    Result<FoundLocalQueue> existing = FindLocalQueue(store_, link.namespace_name, link.name);
    if (existing) return Err(AlreadyExistsError(Described(link.name) + " already exists"));
    if (existing.error().code() != StatusCode::kNotFound) return Err(existing.error());
    Result<store::Object> named = store_.Get({"Queue", "", link.cluster_queue});
    // A Cohort's Queue (api/source_form.h) is no ClusterQueue: it admits nothing.
    if (named && api::SourceTypeOf(named->body) == &api::CohortType()) {
      return Err(InvalidArgumentError("spec.clusterQueue: \"" + link.cluster_queue +
                                      "\" is a Cohort, not a ClusterQueue"));
    }
    if (!named && named.error().code() == StatusCode::kNotFound) {
      return Err(InvalidArgumentError(
          "spec.clusterQueue: ClusterQueue \"" + link.cluster_queue +
          "\" not found; apply it first (strata keeps a LocalQueue on the queue it names)"));
    }
    if (!named) return Err(named.error());
    queue = std::move(*named);
  }
  const Json updated =
      api::WithLocalQueue(queue.body, link, document, FormatRfc3339(options_.clock->Now()));
  ASSIGN_OR_RETURN(api::Object decoded, api::DecodeObject(updated));
  ASSIGN_OR_RETURN(store::Object write, ToStoreObject(decoded));
  write.resource_version = queue.resource_version;
  if (!dry_run) {
    // A namespaced object is written into its namespace, as every create makes it.
    if (current == nullptr) RETURN_IF_ERROR(EnsureNamespace(link.namespace_name));
    ASSIGN_OR_RETURN(write, store_.Update(std::move(write)));
  }
  for (Json& served : api::ServedLocalQueues(write.body)) {
    if (served["metadata"]["namespace"] == link.namespace_name &&
        served["metadata"]["name"] == link.name) {
      ASSIGN_OR_RETURN(WorkloadCounts counts, CountWorkloads(store_, link.namespace_name));
      served["status"] = counts.StatusOf(served);
      return AtVersionOf(std::move(served), path);
    }
  }
  return Err(InternalError("the LocalQueue written is not on its Queue"));
}

Result<ApiReply> RestApi::ServeLocalQueue(const api::ResourcePath& path,
                                          const net::HttpRequest& request, const Query& query,
                                          std::string* verb) {
  const std::string& method = request.method;
  if (!path.subresource.empty()) {
    return Err(NotFoundError("localqueues have no " + path.subresource +
                             " subresource in strata: a LocalQueue's status is read with it"));
  }
  const bool watch =
      query.count("watch") != 0 && query.at("watch") != "0" && query.at("watch") != "false";
  if (watch && method == "GET") {
    *verb = "watch";
    ASSIGN_OR_RETURN(TableWanted table, TableRequested(request, query));
    return WatchLocalQueues(path, query, table);
  }
  const bool dry_run = DryRun(query);
  if (path.name.empty()) {
    if (method == "GET") {
      *verb = "list";
      ASSIGN_OR_RETURN(TableWanted table, TableRequested(request, query));
      ASSIGN_OR_RETURN(auto selected, SelectLocalQueues(path, query));
      Json metadata = {{"resourceVersion", std::to_string(selected.second)}};
      if (table) {
        ASSIGN_OR_RETURN(Json shown, TableOf(path, *table, selected.first, std::move(metadata)));
        return JsonReply(200, shown);
      }
      return JsonReply(200, {{"kind", "LocalQueueList"},
                             {"apiVersion", path.type->GroupVersion()},
                             {"metadata", std::move(metadata)},
                             {"items", std::move(selected.first)}});
    }
    if (method == "POST") {
      *verb = "create";
      // The Queue it is kept on is read again when another write (its status, another
      // LocalQueue) changed it in between, as for the other verbs.
      const Json body = RequestObject(request.body);
      for (int attempt = 0;; ++attempt) {
        Result<Json> created = WriteLocalQueue(path, body, nullptr, dry_run);
        if (created) return JsonReply(201, *created);
        if (created.error().code() != StatusCode::kConflict || attempt + 1 == kWriteAttempts) {
          return Err(created.error());
        }
      }
    }
    return Err(UnimplementedError("method " + method + " is not allowed on a collection"));
  }
  const std::string namespace_name = path.namespace_name.value_or("default");
  if (method == "GET") {
    *verb = "get";
    ASSIGN_OR_RETURN(TableWanted table, TableRequested(request, query));
    Query one = query;
    one["fieldSelector"] = "metadata.name=" + path.name;
    api::ResourcePath in_namespace = path;
    in_namespace.namespace_name = namespace_name;
    in_namespace.name.clear();
    ASSIGN_OR_RETURN(auto selected, SelectLocalQueues(in_namespace, one));
    if (selected.first.empty()) return Err(NotFoundError(Described(path.name) + " not found"));
    if (table) {
      Json metadata = {{"resourceVersion", std::to_string(selected.second)}};
      ASSIGN_OR_RETURN(Json shown, TableOf(path, *table, selected.first, std::move(metadata)));
      return JsonReply(200, shown);
    }
    return JsonReply(200, selected.first.front());
  }
  if (method == "PUT" || method == "PATCH") {
    *verb = method == "PUT" ? "update" : "patch";
    std::optional<PatchType> patch_type;
    Json patch;
    if (method == "PATCH") {
      ASSIGN_OR_RETURN(patch_type, PatchTypeFor(request.Header("Content-Type"), path.type->kind));
      if (*patch_type == PatchType::kApply) {
        return Err(UnimplementedError(
            "server-side apply of a LocalQueue is not supported: a LocalQueue is kept on its "
            "ClusterQueue's Queue; use kubectl apply without --server-side"));
      }
      ASSIGN_OR_RETURN(patch, ParsePatch(request.body));
    }
    const Json body = method == "PUT" ? RequestObject(request.body) : Json();
    // A resourceVersion the client gave is its precondition; without one, the Queue as read.
    const std::string client_version =
        method == "PUT" ? StringMemberOr(MemberOrNull(body, "metadata"), "resourceVersion") : "";
    for (int attempt = 0;; ++attempt) {
      ASSIGN_OR_RETURN(FoundLocalQueue found, FindLocalQueue(store_, namespace_name, path.name));
      Json document = body;
      if (patch_type) {
        ASSIGN_OR_RETURN(document, ApplyParsedPatch(*patch_type, path.type->kind,
                                                    AtVersionOf(found.served, path), patch));
        const std::string patched_version =
            StringMemberOr(MemberOrNull(document, "metadata"), "resourceVersion");
        if (!patched_version.empty() &&
            patched_version != std::to_string(found.queue.resource_version)) {
          return Err(ConflictError("Operation cannot be fulfilled on " + Described(path.name) +
                                   ": the object has been modified; please apply your changes "
                                   "to the latest version and try again"));
        }
      } else if (!client_version.empty() &&
                 client_version != std::to_string(found.queue.resource_version)) {
        return Err(ConflictError("Operation cannot be fulfilled on " + Described(path.name) +
                                 ": the object has been modified; please apply your changes to "
                                 "the latest version and try again"));
      }
      Result<Json> written = WriteLocalQueue(path, std::move(document), &found.queue, dry_run);
      if (written) return JsonReply(200, *written);
      if (written.error().code() != StatusCode::kConflict || !client_version.empty() ||
          attempt + 1 == kWriteAttempts) {
        return Err(written.error());
      }
    }
  }
  if (method == "DELETE") {
    *verb = "delete";
    for (int attempt = 0;; ++attempt) {
      ASSIGN_OR_RETURN(FoundLocalQueue found, FindLocalQueue(store_, namespace_name, path.name));
      const Json updated = api::WithoutLocalQueue(found.queue.body, namespace_name, path.name);
      ASSIGN_OR_RETURN(api::Object decoded, api::DecodeObject(updated));
      ASSIGN_OR_RETURN(store::Object write, ToStoreObject(decoded));
      write.resource_version = found.queue.resource_version;
      if (dry_run) return JsonReply(200, AtVersionOf(found.served, path));
      Result<store::Object> written = store_.Update(std::move(write));
      if (written) return JsonReply(200, AtVersionOf(found.served, path));
      if (written.error().code() != StatusCode::kConflict || attempt + 1 == kWriteAttempts) {
        return Err(written.error());
      }
    }
  }
  return Err(UnimplementedError("method " + method + " is not allowed on a LocalQueue"));
}

Status RestApi::ForgetLocalQueues(const std::string& namespace_name) {
  store::Selection queues;
  queues.kind = "Queue";
  Result<store::ListResult> listed = store_.List(queues);
  if (!listed) return listed.error();
  for (const store::Object& queue : listed->items) {
    Json updated = queue.body;
    for (const Json& local : api::ServedLocalQueues(queue.body)) {
      if (local["metadata"]["namespace"] != namespace_name) continue;
      updated = api::WithoutLocalQueue(updated, namespace_name,
                                       StringMemberOr(local["metadata"], "name"));
    }
    if (updated == queue.body) continue;
    Result<api::Object> decoded = api::DecodeObject(updated);
    if (!decoded) return decoded.error();
    Result<store::Object> write = ToStoreObject(*decoded);
    if (!write) return write.error();
    write->resource_version = queue.resource_version;
    Result<store::Object> written = store_.Update(std::move(*write));
    if (!written && written.error().code() != StatusCode::kNotFound) return written.error();
  }
  return Status::Ok();
}

}  // namespace strata::server
