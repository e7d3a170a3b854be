// The REST API's object verbs: list, watch, get, create, replace, patch, delete and apply.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <set>

#include "api/api_status.h"
#include "api/config_data.h"
#include "api/manifest.h"
#include "api/pod_contract.h"
#include "api/pod_v1_form.h"
#include "api/served_form.h"
#include "api/source_form.h"
#include "api/strategic_merge_patch.h"
#include "api/validation.h"
#include "cluster/indexes.h"
#include "common/json_member.h"
#include "common/yaml_json.h"
#include "server/field_manager.h"
#include "server/list_pages.h"
#include "server/list_selection.h"
#include "server/object_codec.h"
#include "server/object_patch.h"
#include "server/object_write_steps.h"
#include "server/rest_api.h"
#include "server/watch_stream.h"
#include "server/workload_priority.h"

namespace strata::server {
namespace {

// How often a write whose precondition a concurrent writer invalidated is read and tried again.
// Only writes whose precondition the server chose itself are retried; a client's stale
// resourceVersion is the client's 409.
constexpr int kWriteAttempts = 5;

}  // namespace

Result<RestApi::TableWanted> RestApi::TableRequested(const net::HttpRequest& request,
                                                     const Query& query) {
  std::optional<std::string> version = api::TableVersionWanted(request.Header("Accept"));
  if (!version) return TableWanted();
  auto include = query.find("includeObject");
  std::optional<api::TableObject> object =
      api::ParseTableObject(include == query.end() ? "" : include->second);
  if (!object) {
    return Err(InvalidArgumentError("includeObject: must be None, Metadata or Object, not \"" +
                                    include->second + "\""));
  }
  return TableWanted(TableRequest{*version, *object});
}

Result<nlohmann::json> RestApi::TableOf(const api::ResourcePath& path, const TableRequest& table,
                                        const std::vector<nlohmann::json>& objects,
                                        nlohmann::json metadata) {
  // The pods of the objects in the table, from the control plane's cache by owner: a row costs
  // its own pods, not a list of the namespace's (a watch sends one row per event).
  std::vector<nlohmann::json> pods;
  if (api::TableReadsPods(*path.type)) {
    RETURN_IF_ERROR(cache_.Sync());
    for (const nlohmann::json& object : objects) {
      const nlohmann::json& metadata = MemberOrNull(object, "metadata");
      for (const cluster::ObjectRef& pod : cache_.Indexed(
               cluster::kPodsByOwner,
               cluster::OwnerIndexValue(path.type->kind, StringMemberOr(metadata, "namespace"),
                                        StringMemberOr(metadata, "name")))) {
        pods.push_back(pod->raw.body);
      }
    }
  }
  return api::MakeTable(*path.type, table.version, objects, table.include, std::move(metadata),
                        options_.clock->Now(), pods);
}

// Kubernetes' chunked lists: `limit` cuts the list into pages and `continue` asks for the next.
// Unlike etcd, the store keeps no old snapshots, so a later page shows the current state of the
// objects after the cursor; every page carries the first page's resourceVersion, and a client
// that watches from it once it has every page sees each change since, so it converges on the
// same state a consistent snapshot plus the watch would give.
Result<ApiReply> RestApi::List(const api::ResourcePath& path, const Query& query,
                               const TableWanted& table, api::ServedForm form) {
  ASSIGN_OR_RETURN(Selected selected, SelectionFor(path, query));
  int64_t limit = 0;
  if (auto it = query.find("limit"); it != query.end()) {
    ASSIGN_OR_RETURN(limit, ParseVersion(it->second, "limit"));
  }
  std::optional<ListCursor> after;
  if (auto it = query.find("continue"); it != query.end() && !it->second.empty()) {
    ASSIGN_OR_RETURN(after, DecodeContinue(it->second));
  }
  ASSIGN_OR_RETURN(store::ListResult listed, store_.List(selected.selection));
  std::vector<store::Object> matching;
  for (store::Object& object : listed.items) {
    if (selected.Matches(object)) matching.push_back(std::move(object));
  }
  const int64_t version = after ? after->first_page_version : listed.resource_version;
  ListPage page = CutPage(std::move(matching), after, limit, version);
  nlohmann::json metadata = {{"resourceVersion", std::to_string(version)}};
  if (page.next) {
    metadata["continue"] = EncodeContinue(*page.next);
    metadata["remainingItemCount"] = page.remaining;
  }
  if (table) {
    std::vector<nlohmann::json> objects;
    for (store::Object& object : page.items) objects.push_back(std::move(object.body));
    ASSIGN_OR_RETURN(nlohmann::json shown, TableOf(path, *table, objects, std::move(metadata)));
    return JsonReply(200, shown);
  }
  nlohmann::json items = nlohmann::json::array();
  for (store::Object& object : page.items) {
    api::ToServedForm(object.body, form, path.type);
    items.push_back(std::move(object.body));
  }
  return JsonReply(200, {{"kind", std::string(path.type->kind) + "List"},
                         {"apiVersion", path.type->GroupVersion()},
                         {"metadata", std::move(metadata)},
                         {"items", std::move(items)}});
}

Result<RestApi::WatchRequest> RestApi::WatchRequested(const api::ResourcePath& path,
                                                      const Query& query, const TableWanted& table,
                                                      api::ServedForm form) {
  WatchRequest request;
  ASSIGN_OR_RETURN(request.selected, SelectionFor(path, query));
  WatchStreamOptions& stream = request.stream;
  stream.form = form;
  stream.type = path.type;
  if (table) {
    // Each event's object is a Table of one row (kubectl get -w). Its Ready cells read the pods
    // as they are when the event is sent.
    stream.present = [this, path, table = *table](const nlohmann::json& object) {
      nlohmann::json metadata = {
          {"resourceVersion",
           MemberOrNull(object, "metadata").value("resourceVersion", std::string())}};
      Result<nlohmann::json> shown = TableOf(path, table, {object}, std::move(metadata));
      return shown ? std::move(*shown) : api::StatusObject(shown.error());
    };
  }
  stream.matches = [selected = request.selected](const store::Object& object) {
    return selected.Matches(object);
  };
  stream.kind = std::string(path.type->kind);
  stream.api_version = path.type->GroupVersion();
  stream.clock = options_.clock;
  stream.bookmarks =
      query.count("allowWatchBookmarks") != 0 && query.at("allowWatchBookmarks") != "false";
  Duration timeout = options_.default_watch_timeout;
  if (auto it = query.find("timeoutSeconds"); it != query.end()) {
    ASSIGN_OR_RETURN(int64_t seconds, ParseVersion(it->second, "timeoutSeconds"));
    timeout = std::chrono::seconds(seconds);
  }
  stream.deadline = options_.clock->Now() + timeout;
  request.version = query.count("resourceVersion") ? query.at("resourceVersion") : "";
  // Kubernetes' watch-list: the current state, which is not older than any version asked for,
  // then a bookmark that says so.
  request.send_initial_events =
      query.count("sendInitialEvents") != 0 && query.at("sendInitialEvents") == "true";
  if (!request.version.empty() && request.version != "0" && !request.send_initial_events) {
    ASSIGN_OR_RETURN(request.from_version, ParseVersion(request.version, "resourceVersion"));
  }
  return request;
}

Status RestApi::WatchRequest::StartError(const Status& error) const {
  if (error.code() != StatusCode::kExpired) return error;
  return ExpiredError("too old resource version: " + version + " (" + error.message() + ")");
}

Result<ApiReply> RestApi::Watch(const api::ResourcePath& path, const Query& query,
                                const TableWanted& table, api::ServedForm form) {
  ASSIGN_OR_RETURN(WatchRequest request, WatchRequested(path, query, table, form));
  const Selected& selected = request.selected;
  WatchStreamOptions& stream = request.stream;
  store::WatchOptions watch;
  watch.selection = selected.selection;
  if (!request.from_version) {
    // Kubernetes' "any version": the current state as ADDED events, then every change.
    ASSIGN_OR_RETURN(store::ListResult listed, store_.List(selected.selection));
    for (store::Object& object : listed.items) {
      if (selected.Matches(object)) stream.initial.push_back(std::move(object));
    }
    watch.from_version = listed.resource_version;
    if (request.send_initial_events) stream.initial_version = listed.resource_version;
  } else {
    watch.from_version = request.from_version;
  }
  Result<std::unique_ptr<store::Watcher>> watcher = store_.Watch(watch);
  if (!watcher) return Err(request.StartError(watcher.error()));
  ApiReply reply;
  reply.response.status = 200;
  reply.response.headers = {{"Content-Type", "application/json"}};
  reply.stream =
      std::make_unique<WatchStream>(std::move(*watcher), std::move(stream), stats_.watches.With());
  return reply;
}

Result<ApiReply> RestApi::GetObject(const api::ResourcePath& path, const TableWanted& table,
                                    api::ServedForm form) {
  ASSIGN_OR_RETURN(store::Object object, ReadAt(store_, path));
  if (table) {
    nlohmann::json metadata = {{"resourceVersion", std::to_string(object.resource_version)}};
    ASSIGN_OR_RETURN(nlohmann::json shown,
                     TableOf(path, *table, {std::move(object.body)}, std::move(metadata)));
    return JsonReply(200, shown);
  }
  return ServedReply(200, std::move(object.body), form, path);
}

Result<FieldWrite> RestApi::WriteBy(const api::ResourcePath& path, const net::HttpRequest& request,
                                    const Query& query, bool apply) const {
  FieldWrite who;
  who.kind = std::string(path.type->kind);
  who.api_version = path.type->GroupVersion();
  ASSIGN_OR_RETURN(who.manager, FieldManagerOf(query, request.Header("User-Agent"), apply));
  who.time = FormatRfc3339(options_.clock->Now());
  return who;
}

Result<ApiReply> RestApi::Create(const api::ResourcePath& path, const net::HttpRequest& request,
                                 const Query& query, api::ServedForm form) {
  ASSIGN_OR_RETURN(const FieldWrite who, WriteBy(path, request, query, /*apply=*/false));
  ASSIGN_OR_RETURN(store::Object object, DecodeSingle(path, request.body));
  RETURN_IF_ERROR(GiveClassPriority(store_, nullptr, {}, object));
  DropOwnedStatus(object);
  RETURN_IF_ERROR(RecordManagedFields(who, nullptr, object));
  if (DryRun(query)) return ServedReply(201, std::move(object.body), form, path);
  RETURN_IF_ERROR(EnsureNamespace(object.key.namespace_name));
  ASSIGN_OR_RETURN(store::Object created, store_.Create(std::move(object)));
  return ServedReply(201, std::move(created.body), form, path);
}

Result<ApiReply> RestApi::Replace(const api::ResourcePath& path, const net::HttpRequest& request,
                                  const Query& query, api::ServedForm form) {
  ASSIGN_OR_RETURN(const FieldWrite who, WriteBy(path, request, query, /*apply=*/false));
  const bool dry_run = DryRun(query);
  if (path.type->kind == "Pod") {
    const nlohmann::json document =
        nlohmann::json::parse(request.body, nullptr, /*allow_exceptions=*/false);
    // A pod as Kubernetes' clients read it, written back: its labels and annotations change.
    if (api::IsV1PodShape(document)) return ReplaceV1Pod(path, document, who, dry_run, form);
  }
  ASSIGN_OR_RETURN(store::Object replacement, DecodeReplacement(path, request.body));
  const bool client_precondition = replacement.resource_version != 0;
  for (int attempt = 0;; ++attempt) {
    ASSIGN_OR_RETURN(store::Object current, ReadAt(store_, path));
    Result<store::Object> updated = UpdateOver(store_, current, replacement, &who, dry_run);
    if (updated) return ServedReply(200, std::move(updated->body), form, path);
    if (updated.error().code() != StatusCode::kConflict || client_precondition ||
        attempt + 1 == kWriteAttempts) {
      return Err(updated.error());
    }
  }
}

Result<ApiReply> RestApi::ReplaceV1Pod(const api::ResourcePath& path, const nlohmann::json& pod,
                                       const FieldWrite& who, bool dry_run, api::ServedForm form) {
  const bool client_precondition = !ResourceVersionOf(pod).is_null();
  for (int attempt = 0;; ++attempt) {
    ASSIGN_OR_RETURN(store::Object current, store_.Get(KeyOf(path)));
    ASSIGN_OR_RETURN(nlohmann::json document, api::StoredPodFromV1(pod, current.body));
    if (!client_precondition) {
      document["metadata"]["resourceVersion"] = std::to_string(current.resource_version);
    }
    Result<store::Object> updated =
        UpdateWithDocument(store_, path, current, document, &who, dry_run);
    if (updated) return ServedReply(200, std::move(updated->body), form, path);
    if (updated.error().code() != StatusCode::kConflict || client_precondition ||
        attempt + 1 == kWriteAttempts) {
      return Err(updated.error());
    }
  }
}

Result<ApiReply> RestApi::ReplaceStatus(const api::ResourcePath& path,
                                        const net::HttpRequest& request, const Query& query,
                                        api::ServedForm form) {
  ASSIGN_OR_RETURN(const FieldWrite who, WriteBy(path, request, query, /*apply=*/false));
  nlohmann::json status = nlohmann::json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  ASSIGN_OR_RETURN(store::Object current, store_.Get(KeyOf(path)));
  ASSIGN_OR_RETURN(store::Object updated,
                   UpdateStatus(store_, path, current, status, who, DryRun(query)));
  return ServedReply(200, std::move(updated.body), form, path);
}

// Kubernetes' PATCH: the patch is applied to the object as served, and the result is written as
// a PUT of it would be (of the object, or of its status subresource), through the same decoding
// and validation. The resourceVersion the result holds is the write's precondition: the one
// read, unless the patch gave its own.
Result<ApiReply> RestApi::Patch(const api::ResourcePath& path, const net::HttpRequest& request,
                                const Query& query, api::ServedForm form) {
  const std::string_view kind = api::PatchKindOf(*path.type);
  ASSIGN_OR_RETURN(PatchType type, PatchTypeFor(request.Header("Content-Type"), kind));
  if (type == PatchType::kApply) return ApplyServerSide(path, request, query, form);
  ASSIGN_OR_RETURN(const FieldWrite who, WriteBy(path, request, query, /*apply=*/false));
  const bool dry_run = DryRun(query);
  ASSIGN_OR_RETURN(const nlohmann::json patch, ParsePatch(request.body));
  for (int attempt = 0;; ++attempt) {
    ASSIGN_OR_RETURN(store::Object current, ReadAt(store_, path));
    nlohmann::json served = current.body;
    api::ToServedForm(served, form, path.type);
    ASSIGN_OR_RETURN(nlohmann::json patched, ApplyParsedPatch(type, kind, served, patch));
    if (api::IsV1PodShape(patched)) {
      if (path.subresource == "status") {
        return Err(InvalidArgumentError(
            "status: a pod's status is written by its node agent, not through Kubernetes' v1 "
            "form"));
      }
      // Patched as Kubernetes' clients read the pod: what may change goes back into strata's.
      ASSIGN_OR_RETURN(patched, api::StoredPodFromV1(patched, current.body));
    }
    Result<store::Object> updated =
        path.subresource == "status"
            ? UpdateStatus(store_, path, current, patched, who, dry_run)
            : UpdateWithDocument(store_, path, current, patched, &who, dry_run);
    if (updated) return ServedReply(200, std::move(updated->body), form, path);
    // A write that raced another one is patched again over what that one wrote; a stale
    // resourceVersion that the patch gave is the client's conflict.
    const bool own_precondition =
        ResourceVersionOf(patched) != nlohmann::json(std::to_string(current.resource_version));
    if (updated.error().code() != StatusCode::kConflict || own_precondition ||
        attempt + 1 == kWriteAttempts) {
      return Err(updated.error());
    }
  }
}

Result<ApiReply> RestApi::ApplyServerSide(const api::ResourcePath& path,
                                          const net::HttpRequest& request, const Query& query,
                                          api::ServedForm form) {
  if (path.subresource == "status") {
    return Err(UnimplementedError(
        "server-side apply of the status subresource is not supported: apply the object, or "
        "patch its status (kubectl patch --subresource status --type merge)"));
  }
  ASSIGN_OR_RETURN(const FieldWrite who, WriteBy(path, request, query, /*apply=*/true));
  const bool dry_run = DryRun(query);
  // Go's ParseBool, as kube-apiserver reads it: the Python client sends "True".
  auto forced = query.find("force");
  const bool force = forced != query.end() && (forced->second == "true" ||
                                               forced->second == "True" || forced->second == "1");
  ASSIGN_OR_RETURN(std::vector<YamlDocument> documents, ParseYamlDocuments(request.body));
  if (documents.size() != 1 || !documents[0].value.is_object()) {
    return Err(InvalidArgumentError(
        "request body: an apply configuration is one object in YAML or JSON, got " +
        (documents.size() == 1 ? "a " + std::string(documents[0].value.type_name())
                               : std::to_string(documents.size()) + " documents")));
  }
  nlohmann::json applied = std::move(documents[0].value);
  const std::string api_version = path.type->GroupVersion();
  if (StringMemberOr(applied, "apiVersion") != api_version ||
      StringMemberOr(applied, "kind") != path.type->kind) {
    return Err(InvalidArgumentError(fmt::format(
        "apiVersion, kind: an apply configuration for {} is apiVersion {}, kind {}; "
        "got apiVersion \"{}\", kind \"{}\"",
        path.type->Path(path.namespace_name.value_or(""), path.name), api_version, path.type->kind,
        StringMemberOr(applied, "apiVersion"), StringMemberOr(applied, "kind"))));
  }
  nlohmann::json& metadata = applied["metadata"];
  if (!metadata.is_object()) {
    return Err(InvalidArgumentError("metadata: an apply configuration needs metadata.name"));
  }
  if (!metadata.contains("name")) metadata["name"] = path.name;
  if (metadata["name"] != path.name) {
    return Err(InvalidArgumentError("metadata.name: " + metadata["name"].dump() +
                                    " does not match the name in the request path \"" + path.name +
                                    "\""));
  }
  const bool client_precondition = !ResourceVersionOf(applied).is_null();
  for (int attempt = 0;; ++attempt) {
    Result<store::Object> current = ReadAt(store_, path);
    if (!current && current.error().code() != StatusCode::kNotFound) return Err(current.error());
    std::optional<nlohmann::json> live;
    if (current) {
      live = current->body;
      ToFormWritten(*live, who);
    }
    ASSIGN_OR_RETURN(nlohmann::json merged,
                     ServerSideApply(who, force, live ? &*live : nullptr, applied));
    Result<store::Object> written = store::Object();
    if (!current) {
      // Created as a POST of the applied object would be.
      ASSIGN_OR_RETURN(store::Object object, DecodeSingle(path, merged.dump()));
      RETURN_IF_ERROR(GiveClassPriority(store_, nullptr, {}, object));
      DropOwnedStatus(object);
      // Set after decoding: a compatible kind's decoder (a v1 Pod's) keeps none.
      object.body["metadata"]["managedFields"] = merged["metadata"]["managedFields"];
      if (dry_run) return ServedReply(201, std::move(object.body), form, path);
      RETURN_IF_ERROR(EnsureNamespace(object.key.namespace_name));
      written = store_.Create(std::move(object));
      if (written) return ServedReply(201, std::move(written->body), form, path);
    } else {
      if (api::IsV1PodShape(merged)) {
        // Applied as Kubernetes' clients read the pod: what may change goes back into strata's.
        ASSIGN_OR_RETURN(merged, api::StoredPodFromV1(merged, current->body));
      }
      written = UpdateWithDocument(store_, path, *current, merged, nullptr, dry_run);
      if (written) return ServedReply(200, std::move(written->body), form, path);
    }
    // Raced with another writer: apply again over what it wrote.
    const StatusCode code = written.error().code();
    const bool raced = code == StatusCode::kConflict || code == StatusCode::kAlreadyExists;
    if (!raced || client_precondition || attempt + 1 == kWriteAttempts) {
      return Err(written.error());
    }
  }
}

Result<ApiReply> RestApi::RecordCheckpoint(const api::ResourcePath& path) {
  const std::string now = FormatRfc3339(options_.clock->Now());
  for (int attempt = 0;; ++attempt) {
    ASSIGN_OR_RETURN(store::Object current, store_.Get(KeyOf(path)));
    store::Object write = current;
    write.body["metadata"]["annotations"][api::kLastCheckpointAnnotation] = now;
    Result<store::Object> updated = store_.Update(std::move(write));
    if (updated) return ServedReply(200, std::move(updated->body), api::ServedForm::kStrata, path);
    if (updated.error().code() != StatusCode::kConflict || attempt + 1 == kWriteAttempts) {
      return Err(updated.error());
    }
  }
}

Result<ApiReply> RestApi::Delete(const api::ResourcePath& path, const Query& query,
                                 api::ServedForm form) {
  int64_t precondition = 0;
  if (auto it = query.find("resourceVersion"); it != query.end()) {
    ASSIGN_OR_RETURN(precondition, ParseVersion(it->second, "resourceVersion"));
  }
  if (path.type->kind == "Namespace") RETURN_IF_ERROR(DeleteNamespaceContents(path.name));
  if (api::IsSourceServedType(*path.type)) {
    Result<store::Object> found = ReadAt(store_, path);
    if (!found) return Err(found.error());
  }
  ASSIGN_OR_RETURN(store::Object deleted, store_.Delete(KeyOf(path), precondition));
  // A node's Lease goes with it, as its ownerReference makes Kubernetes' garbage collector do.
  if (deleted.key.kind == "Node" && options_.node_leases != nullptr) {
    options_.node_leases->Forget(deleted.key.name);
  }
  return ServedReply(200, std::move(deleted.body), form, path);
}

Result<ApiReply> RestApi::Apply(const net::HttpRequest& request, const Query& query,
                                const Caller& caller) {
  const std::string& body = request.body;
  bool dry_run = DryRun(query);
  ASSIGN_OR_RETURN(const std::string manager,
                   FieldManagerOf(query, request.Header("User-Agent"), /*required=*/false));
  std::vector<std::string> warnings;
  ASSIGN_OR_RETURN(std::vector<api::Object> decoded,
                   DecodeRequestBody(body, "request body", std::nullopt, &warnings));
  std::vector<store::Object> objects;
  std::set<store::ObjectKey> seen;
  // The body's WorkloadPriorityClasses give their workloads their value even where the class
  // comes after them or the apply is a dry run.
  std::map<std::string, int64_t> classes;
  for (const api::Object& object : decoded) {
    if (const auto* priority_class = object.As<api::WorkloadPriorityClass>()) {
      classes[priority_class->metadata.name] = priority_class->spec.value;
    }
  }
  for (const api::Object& object : decoded) {
    ASSIGN_OR_RETURN(store::Object stored, ToStoreObject(object));
    if (!seen.insert(stored.key).second) {
      return Err(InvalidArgumentError("request body: " + stored.key.Describe() +
                                      " is defined more than once"));
    }
    if (caller.kind == Caller::Kind::kUser) {
      Status allowed = AuthorizeUserObject(caller, stored.key.kind, stored.key.namespace_name);
      if (!allowed.ok()) {
        return Err(
            Status(allowed.code(),
                   fmt::format("document {} ({}): {}; no document was applied", objects.size() + 1,
                               stored.key.Describe(), allowed.message())));
      }
    }
    objects.push_back(std::move(stored));
  }
  // One object at a time, in the documents' order: the store has no transaction across
  // objects. A failure names what was applied before it; applying the same body again finishes
  // the rest (what is there already is "unchanged").
  nlohmann::json results = nlohmann::json::array();
  std::vector<std::string> applied;
  for (size_t i = 0; i < objects.size(); ++i) {
    const store::Object& object = objects[i];
    const api::ResourceType* type = api::FindResourceTypeByKind(object.key.kind);
    FieldWrite who;
    who.kind = object.key.kind;
    who.api_version = type == nullptr ? std::string(api::kApiVersion) : type->GroupVersion();
    who.manager = manager;
    who.time = FormatRfc3339(options_.clock->Now());
    Result<std::string> action = ApplyObject(object, who, classes, dry_run);
    if (!action) {
      const std::string done = applied.empty()
                                   ? std::string("no document was applied")
                                   : fmt::format("applied before it: {}", fmt::join(applied, ", "));
      return Err(Status(action.error().code(),
                        fmt::format("document {} ({}): {}; {}", i + 1, object.key.Describe(),
                                    action.error().message(), done)));
    }
    if (*action != "unchanged")
      applied.push_back(fmt::format("{} {}", object.key.Describe(), *action));
    results.push_back({{"kind", object.key.kind},
                       {"namespace", object.key.namespace_name},
                       {"name", object.key.name},
                       {"reference", ObjectReferenceName(object.key.kind, object.key.name)},
                       {"action", *action}});
  }
  ApiReply reply =
      JsonReply(200, {{"kind", "ApplyResult"},
                      {"apiVersion", "strata.dev/v1alpha1"},
                      {"dryRun", dry_run},
                      {"metadata", {{"resourceVersion", std::to_string(store_.CurrentVersion())}}},
                      {"results", std::move(results)}});
  AddWarningHeaders(warnings, reply.response.headers);
  return reply;
}

Result<std::string> RestApi::ApplyObject(const store::Object& object, const FieldWrite& who,
                                         const std::map<std::string, int64_t>& classes,
                                         bool dry_run) {
  for (int attempt = 0;; ++attempt) {
    Result<store::Object> current = store_.Get(object.key);
    if (!current && current.error().code() != StatusCode::kNotFound) return Err(current.error());
    Result<store::Object> written = store::Object();
    std::string action;
    if (!current) {
      store::Object create = object;
      RETURN_IF_ERROR(GiveClassPriority(store_, nullptr, classes, create));
      DropOwnedStatus(create);
      RETURN_IF_ERROR(RecordManagedFields(who, nullptr, create));
      action = "created";
      if (!dry_run) {
        RETURN_IF_ERROR(EnsureNamespace(create.key.namespace_name));
        written = store_.Create(std::move(create));
      }
    } else {
      store::Object write = object;
      RETURN_IF_ERROR(RefuseOtherSourceKind(*current, write));
      RETURN_IF_ERROR(GiveClassPriority(store_, &*current, classes, write));
      // The managed fields are the server's record of writes: a manifest changes them only
      // through what it changes.
      const nlohmann::json& managed = ManagedFieldsOfStored(current->body);
      if (managed.is_null()) {
        write.body["metadata"].erase("managedFields");
      } else {
        write.body["metadata"]["managedFields"] = managed;
      }
      if (!CarryStatus(*current, write)) return std::string("unchanged");
      RETURN_IF_ERROR(api::CheckImmutableUpdate(current->body, write.body));
      RETURN_IF_ERROR(RecordManagedFields(who, &*current, write));
      if (write.resource_version == 0) write.resource_version = current->resource_version;
      action = "configured";
      if (!dry_run) written = store_.Update(std::move(write));
    }
    if (written) return action;
    // Someone else wrote it between the read and the write: read it again.
    StatusCode code = written.error().code();
    bool raced = code == StatusCode::kConflict || code == StatusCode::kAlreadyExists ||
                 (code == StatusCode::kNotFound && current);
    if (!raced || object.resource_version != 0 || attempt + 1 == kWriteAttempts) {
      return Err(written.error());
    }
  }
}

Status RestApi::EnsureNamespace(const std::string& name) {
  if (name.empty()) return Status();
  const store::ObjectKey key{"Namespace", "", name};
  if (Result<store::Object> found = store_.Get(key);
      found || found.error().code() != StatusCode::kNotFound) {
    return found ? Status() : found.error();
  }
  api::Namespace created;
  created.metadata.name = name;
  Result<store::Object> object = ToStoreObject(api::Object(std::move(created)));
  if (!object) return object.error();
  Result<store::Object> written = store_.Create(std::move(*object));
  if (!written && written.error().code() != StatusCode::kAlreadyExists) return written.error();
  return Status();
}

Status RestApi::DeleteNamespaceContents(const std::string& name) {
  std::vector<std::string_view> kinds;
  for (const api::ResourceType& type : api::AllResourceTypes()) {
    if (type.namespaced && type.kind != "Pod" && type.kind != "Event") kinds.push_back(type.kind);
  }
  kinds.push_back("Pod");
  kinds.push_back("Event");
  if (Status forgotten = ForgetLocalQueues(name); !forgotten.ok()) return forgotten;
  for (std::string_view kind : kinds) {
    store::Selection selection;
    selection.kind = std::string(kind);
    selection.namespace_name = name;
    Result<store::ListResult> listed = store_.List(selection);
    if (!listed) return listed.error();
    for (const store::Object& object : listed->items) {
      Result<store::Object> deleted = store_.Delete(object.key, 0);
      if (!deleted && deleted.error().code() != StatusCode::kNotFound) return deleted.error();
    }
  }
  return Status();
}

}  // namespace strata::server
