#include "kubestore/kube_store.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "api/annotations.h"
#include "api/pod_v1_form.h"
#include "kubestore/foreign_pod_mapping.h"
#include "store/watch_queue.h"

namespace strata::kubestore {
namespace {

using Json = nlohmann::json;

constexpr int kUnconditionalAttempts = 5;

std::string NamespaceOf(const KindMapping& mapping, const store::ObjectKey& key) {
  return mapping.namespaced ? key.namespace_name : "";
}

std::string CollectionNamespace(const KindMapping& mapping, const store::Selection& selection) {
  return mapping.namespaced ? selection.namespace_name.value_or("") : "";
}

// Whether Pods of `mapping` are read as the kubelet of `kubelet_node` reads them (every pod bound
// there, strata's or not): KubeStoreOptions::kubelet_node.
bool KubeletPods(const KindMapping& mapping, const std::string& kubelet_node) {
  return mapping.kind == "Pod" && !kubelet_node.empty();
}

// The kind's own selector (none for a kubelet's pods) and the caller's, joined.
std::string LabelSelectorFor(const KindMapping& mapping, const store::LabelSelector& labels,
                             const std::string& kubelet_node) {
  std::string selector(KubeletPods(mapping, kubelet_node) ? "" : mapping.owned_selector);
  std::string asked = labels.ToString();
  if (!asked.empty()) selector += (selector.empty() ? "" : ",") + asked;
  return selector;
}

// Whether the server's object is one of the kind's (a Pod strata did not write is not).
bool Owned(const KindMapping& mapping, const Json& object) {
  if (mapping.owned_selector.empty()) return true;
  const Json& labels = object.value("metadata", Json::object()).value("labels", Json::object());
  return labels.value(api::kManagedByLabel, "") == api::kManagedByStrata;
}

// The field selector of a kubelet's reads: the pods bound to its node, and its own Node (the
// Node authorizer lets a node's credentials read no other); "" for any other read.
std::string FieldSelectorFor(const KindMapping& mapping, const std::string& kubelet_node) {
  if (KubeletPods(mapping, kubelet_node)) return "spec.nodeName=" + kubelet_node;
  if (mapping.kind == "Node" && !kubelet_node.empty()) return "metadata.name=" + kubelet_node;
  return "";
}

// The store object of `object`, the server's, through `mapping`; a pod strata did not write is
// read as a foreign pod when it is bound to `kubelet_node`, else (nullopt) it is none of the
// store's.
Result<std::optional<store::Object>> ReadObject(const KindMapping& mapping, const Json& object,
                                                const std::string& kubelet_node) {
  if (Owned(mapping, object)) {
    ASSIGN_OR_RETURN(store::Object read, FromKube(mapping, object));
    return std::optional<store::Object>(std::move(read));
  }
  const Json& spec = object.value("spec", Json::object());
  if (!KubeletPods(mapping, kubelet_node) || !spec.is_object() ||
      spec.value("nodeName", "") != kubelet_node) {
    return std::optional<store::Object>();
  }
  ASSIGN_OR_RETURN(Json body, ForeignPodFromKube(object));
  ASSIGN_OR_RETURN(store::Object read, store::ObjectFromBody(mapping.kind, body));
  return std::optional<store::Object>(std::move(read));
}

std::string VersionOf(const Json& object) {
  return object.value("metadata", Json::object()).value("resourceVersion", "");
}

// The parts of an object that a write of the object itself (not /status) sets.
Json WithoutStatus(Json object) {
  object.erase("status");
  if (object.contains("metadata")) object["metadata"].erase("managedFields");
  return object;
}

// Raises `value` to `version` if it is lower.
void RaiseTo(std::atomic<int64_t>& value, int64_t version) {
  int64_t seen = value.load();
  while (version > seen && !value.compare_exchange_weak(seen, version)) {
  }
}

// How long TryNext waits for the event of the store's own latest write of its kind.
constexpr Duration kOwnWriteWait = std::chrono::seconds(1);

// A watch of one kind: a thread reads the server's watch stream, translates each event and
// queues it for the consumer.
class KubeWatcher final : public store::Watcher {
 public:
  // `own_writes`, when set, is the version of the store's latest write of the kind: the watch
  // covers the whole kind, so that write's event is sure to come (see TryNext).
  KubeWatcher(kube::Client& client, const KindMapping& mapping, std::string namespace_name,
              const store::WatchOptions& options, int64_t from_version,
              const KubeStoreOptions& store_options, const std::atomic<int64_t>* own_writes)
      : client_(client),
        own_writes_(own_writes),
        mapping_(mapping),
        namespace_name_(std::move(namespace_name)),
        label_selector_(
            LabelSelectorFor(mapping, options.selection.labels, store_options.kubelet_node)),
        field_selector_(FieldSelectorFor(mapping, store_options.kubelet_node)),
        store_options_(store_options),
        // The server filters by labels, and tells of an object leaving the selection with
        // DELETED: the queue only checks kind and namespace.
        queue_(store::Selection{options.selection.kind, options.selection.namespace_name, {}},
               options.buffer_limit, from_version),
        version_(from_version) {
    thread_ = std::thread([this] { Run(); });
  }

  ~KubeWatcher() override {
    queue_.SetNotify(nullptr);
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      if (stream_ != nullptr) stream_->Cancel();
    }
    wake_.notify_all();
    thread_.join();
  }

  Result<store::WatchEvent> Next(Duration timeout) override { return queue_.Next(timeout); }
  // Read-your-writes, as an embedded store gives it: when nothing waits but this store wrote
  // the kind at a version the watch has not reached, the write's event is on its way; wait for
  // it (up to kOwnWriteWait), so that a cache synced after a write holds it.
  Result<std::optional<store::WatchEvent>> TryNext() override {
    ASSIGN_OR_RETURN(std::optional<store::WatchEvent> event, queue_.TryNext());
    if (event || own_writes_ == nullptr || own_writes_->load() <= queue_.ProgressVersion()) {
      return event;
    }
    Result<store::WatchEvent> next = queue_.Next(kOwnWriteWait);
    if (next) return std::optional<store::WatchEvent>(std::move(*next));
    if (next.error().code() == StatusCode::kDeadlineExceeded) return std::nullopt;
    return Err(next.error());
  }
  void SetNotify(std::function<void()> notify) override { queue_.SetNotify(std::move(notify)); }
  int64_t ProgressVersion() const override { return queue_.ProgressVersion(); }

 private:
  void End(Status status) {
    queue_.End(std::move(status));
    queue_.Notify();
  }

  // Handles one event; false when the watch is over.
  bool Handle(const kube::WatchEvent& event) {
    Result<int64_t> version = store::ParseResourceVersion(event.ResourceVersion());
    if (!version) {
      End(version.error());
      return false;
    }
    version_ = std::max(version_, *version);
    if (event.type == kube::WatchEventType::kBookmark) {
      queue_.Advance(*version);
      return true;
    }
    Result<std::optional<store::Object>> object =
        ReadObject(mapping_, event.object, store_options_.kubelet_node);
    if (!object) {
      End(object.error());
      return false;
    }
    if (!*object) return true;
    store::WatchEventType type =
        event.type == kube::WatchEventType::kAdded     ? store::WatchEventType::kAdded
        : event.type == kube::WatchEventType::kDeleted ? store::WatchEventType::kDeleted
                                                       : store::WatchEventType::kModified;
    if (type == store::WatchEventType::kDeleted) (*object)->resource_version = *version;
    if (queue_.Offer(store::Change{{type, std::move(**object)}, std::nullopt},
                     /*enforce_limit=*/true)) {
      queue_.Notify();
    }
    return true;
  }

  bool Stopping() {
    std::lock_guard lock(mutex_);
    return stopping_;
  }

  void Run() {
    while (!Stopping()) {
      kube::WatchOptions watch;
      watch.resource_version = std::to_string(version_);
      watch.label_selector = label_selector_;
      watch.field_selector = field_selector_;
      watch.allow_bookmarks = true;
      watch.timeout = store_options_.watch_request_timeout;
      Result<std::unique_ptr<kube::WatchStream>> opened =
          client_.Watch(mapping_.resource, namespace_name_, watch);
      Status ended = opened ? Status::Ok() : opened.error();
      if (opened) {
        {
          std::lock_guard lock(mutex_);
          if (stopping_) return;
          stream_ = opened->get();
        }
        while (true) {
          Result<std::optional<kube::WatchEvent>> event =
              (*opened)->Next(std::chrono::milliseconds(500));
          if (!event) {
            if (event.error().code() == StatusCode::kDeadlineExceeded) continue;
            ended = event.error();
            break;
          }
          if (!*event) break;  // the server ended this request: watch again from version_
          if (!Handle(**event)) {
            ended = CancelledError("the watch ended");
            break;
          }
        }
        std::lock_guard lock(mutex_);
        stream_ = nullptr;
      }
      if (ended.ok()) continue;
      if (ended.code() == StatusCode::kCancelled) return;
      if (ended.code() != StatusCode::kUnavailable) {
        End(ended);  // Expired (410: relist), PermissionDenied, ...
        return;
      }
      spdlog::warn("kubestore: watch of {}: {}; watching again", mapping_.resource.ToString(),
                   ended.ToString());
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, store_options_.reconnect_delay, [this] { return stopping_; });
    }
  }

  kube::Client& client_;
  const std::atomic<int64_t>* const own_writes_;  // null: the watch may miss the store's writes
  const KindMapping& mapping_;
  const std::string namespace_name_;
  const std::string label_selector_;
  const std::string field_selector_;
  const KubeStoreOptions store_options_;
  store::WatchQueue queue_;
  int64_t version_;  // the thread's: the version the next request resumes from

  std::mutex mutex_;  // guards stopping_ and stream_
  std::condition_variable wake_;
  bool stopping_ = false;
  kube::WatchStream* stream_ = nullptr;
  std::thread thread_;
};

}  // namespace

KubeStore::KubeStore(kube::Client& client, KubeStoreOptions options)
    : client_(client), options_(options) {
  for (const KindMapping& mapping : AllKindMappings()) own_writes_[mapping.kind];
}

KubeStore::~KubeStore() = default;

Result<store::Object> KubeStore::Get(const store::ObjectKey& key) const {
  ASSIGN_OR_RETURN(const KindMapping* mapping, FindKindMapping(key.kind));
  ASSIGN_OR_RETURN(Json object,
                   client_.Get(mapping->resource, NamespaceOf(*mapping, key), key.name));
  ASSIGN_OR_RETURN(std::optional<store::Object> read, Read(*mapping, object));
  if (!read) {
    return Err(NotFoundError(key.Describe() + " is not one of strata's (no label " +
                             api::kManagedByLabel + "=" + api::kManagedByStrata + ")"));
  }
  SawVersion(read->resource_version);
  return std::move(*read);
}

Result<store::ListResult> KubeStore::List(const store::Selection& selection) const {
  if (selection.kind.empty()) return Err(InvalidArgumentError("kind: must not be empty"));
  ASSIGN_OR_RETURN(const KindMapping* mapping, FindKindMapping(selection.kind));
  kube::ListOptions list;
  list.label_selector = LabelSelectorFor(*mapping, selection.labels, options_.kubelet_node);
  list.field_selector = FieldSelectorFor(*mapping, options_.kubelet_node);
  ASSIGN_OR_RETURN(
      kube::ObjectList listed,
      client_.ListAll(mapping->resource, CollectionNamespace(*mapping, selection), list));
  store::ListResult result;
  ASSIGN_OR_RETURN(result.resource_version, store::ParseResourceVersion(listed.resource_version));
  SawVersion(result.resource_version);
  for (const Json& item : listed.items) {
    ASSIGN_OR_RETURN(std::optional<store::Object> object, Read(*mapping, item));
    if (object) result.items.push_back(std::move(*object));
  }
  std::sort(result.items.begin(), result.items.end(),
            [](const store::Object& a, const store::Object& b) { return a.key < b.key; });
  return result;
}

Result<std::unique_ptr<store::Watcher>> KubeStore::Watch(const store::WatchOptions& options) {
  if (options.selection.kind.empty()) {
    return Err(InvalidArgumentError(
        "selection.kind: must not be empty (the Kubernetes API watches one kind at a time)"));
  }
  ASSIGN_OR_RETURN(const KindMapping* mapping, FindKindMapping(options.selection.kind));
  if (options.from_version && *options.from_version < 0) {
    return Err(InvalidArgumentError("from_version: must not be negative"));
  }
  int64_t from = options.from_version.value_or(0);
  if (!options.from_version) {
    // From now: the version of an empty read of the collection.
    kube::ListOptions list;
    list.label_selector =
        LabelSelectorFor(*mapping, options.selection.labels, options_.kubelet_node);
    list.field_selector = FieldSelectorFor(*mapping, options_.kubelet_node);
    list.limit = 1;
    ASSIGN_OR_RETURN(
        kube::ObjectList listed,
        client_.List(mapping->resource, CollectionNamespace(*mapping, options.selection), list));
    ASSIGN_OR_RETURN(from, store::ParseResourceVersion(listed.resource_version));
    SawVersion(from);
  }
  const bool whole_kind =
      !options.selection.namespace_name && options.selection.labels.MatchesEverything();
  return std::unique_ptr<store::Watcher>(
      new KubeWatcher(client_, *mapping, CollectionNamespace(*mapping, options.selection), options,
                      from, options_, whole_kind ? &own_writes_.at(mapping->kind) : nullptr));
}

void KubeStore::SawVersion(int64_t version) const { RaiseTo(seen_version_, version); }

bool KubeStore::Kubelet(const KindMapping& mapping) const {
  return KubeletPods(mapping, options_.kubelet_node);
}

Result<std::optional<store::Object>> KubeStore::Read(const KindMapping& mapping,
                                                     const Json& object) const {
  return ReadObject(mapping, object, options_.kubelet_node);
}

int64_t KubeStore::CurrentVersion() const {
  if (int64_t seen = seen_version_.load(); seen > 0) return seen;
  kube::ListOptions list;
  list.limit = 1;
  Result<kube::ObjectList> listed = client_.List(kube::resources::kNamespaces, "", list);
  if (!listed) return 0;
  SawVersion(store::ParseResourceVersion(listed->resource_version).value_or(0));
  return seen_version_.load();
}

Result<std::vector<store::Object>> KubeStore::Apply(std::vector<store::Write> writes) {
  if (writes.size() != 1) {
    return Err(InvalidArgumentError(
        "the Kubernetes store applies exactly one write at a time (got " +
        std::to_string(writes.size()) + "); the API has no transaction across objects"));
  }
  store::Write& write = writes.front();
  ASSIGN_OR_RETURN(const KindMapping* mapping, FindKindMapping(write.object.key.kind));
  if (write.op != store::WriteOp::kDelete) RETURN_IF_ERROR(store::ValidateObject(write.object));
  Result<store::Object> written = [&]() -> Result<store::Object> {
    switch (write.op) {
      case store::WriteOp::kCreate:
        return CreateOne(*mapping, std::move(write.object));
      case store::WriteOp::kUpdate:
      case store::WriteOp::kUpsert: {
        // An unconditional update is made of a read and a conditional write: another writer
        // between them is a Conflict to try again, not the caller's.
        const bool upsert = write.op == store::WriteOp::kUpsert;
        const bool unconditional = write.object.resource_version == 0;
        for (int attempt = 1;; ++attempt) {
          Result<store::Object> updated = UpdateOne(*mapping, write.object, upsert);
          if (updated || !unconditional || attempt == kUnconditionalAttempts ||
              updated.error().code() != StatusCode::kConflict) {
            return updated;
          }
        }
      }
      case store::WriteOp::kDelete:
        return DeleteOne(*mapping, write.object);
    }
    return Err(InternalError("unknown write"));
  }();
  if (!written) return Err(written.error());
  SawVersion(written->resource_version);
  if (write.op != store::WriteOp::kDelete) {
    RaiseTo(own_writes_.at(mapping->kind), written->resource_version);
  }
  return std::vector<store::Object>{std::move(*written)};
}

Result<Json> KubeStore::PodOwnerReferences(const store::Object& pod) {
  const Json spec = pod.body.is_object() ? pod.body.value("spec", Json::object()) : Json();
  const Json owner = spec.is_object() ? spec.value("owner", Json::object()) : Json();
  if (!owner.is_object() || !owner.value("kind", Json()).is_string() ||
      !owner.value("name", Json()).is_string()) {
    return Json();
  }
  const std::string kind = owner["kind"].get<std::string>();
  const std::string name = owner["name"].get<std::string>();
  if (kind.empty() || name.empty()) return Json();
  // The owner's uid recorded in the pod (the cluster's own: a strata object's uid is its
  // Kubernetes object's) saves a read per pod; pods written before it was recorded look it up.
  Json recorded = api::PodOwnerReferences(owner);
  if (!recorded.is_null()) return recorded;
  ASSIGN_OR_RETURN(const KindMapping* mapping, FindKindMapping(kind));
  Result<Json> found = client_.Get(mapping->resource, pod.key.namespace_name, name);
  if (!found) {
    // An owner already gone: the pod is made all the same, and its controller cleans it up.
    if (found.error().code() == StatusCode::kNotFound) return Json();
    return Err(found.error());
  }
  return Json::array({{{"apiVersion", mapping->resource.ApiVersion()},
                       {"kind", kind},
                       {"name", name},
                       {"uid", found->value("metadata", Json::object()).value("uid", "")},
                       {"controller", true}}});
}

Result<store::Object> KubeStore::CreateOne(const KindMapping& mapping, store::Object object) {
  object.resource_version = 0;  // the server refuses a create that names one
  ASSIGN_OR_RETURN(Json desired, mapping.to_kube(object, nullptr));
  if (mapping.kind == "Pod") {
    ASSIGN_OR_RETURN(Json owners, PodOwnerReferences(object));
    if (!owners.is_null()) desired["metadata"]["ownerReferences"] = std::move(owners);
  }
  const std::string ns = NamespaceOf(mapping, object.key);
  ASSIGN_OR_RETURN(Json created, client_.Create(mapping.resource, ns, desired));
  if (mapping.status_subresource && object.body.is_object() && object.body.contains("status")) {
    ASSIGN_OR_RETURN(Json with_status, mapping.to_kube(object, &created));
    if (with_status.value("status", Json()) != created.value("status", Json())) {
      ASSIGN_OR_RETURN(created, WriteStatus(mapping, ns, with_status));
    }
  }
  return FromKube(mapping, created);
}

Result<store::Object> KubeStore::UpdateOne(const KindMapping& mapping, store::Object object,
                                           bool upsert) {
  const std::string ns = NamespaceOf(mapping, object.key);
  Result<Json> found = client_.Get(mapping.resource, ns, object.key.name);
  if (found && !Owned(mapping, *found) && Kubelet(mapping) && IsForeignPod(*found)) {
    return UpdateForeignPod(mapping, object, *found);
  }
  if (found && !Owned(mapping, *found)) {
    return Err(
        ConflictError(object.key.Describe() + " exists on the server and is not one of strata's"));
  }
  if (!found && found.error().code() == StatusCode::kNotFound && upsert) {
    if (object.resource_version != 0) {
      return Err(ConflictError(object.key.Describe() + " does not exist at version " +
                               std::to_string(object.resource_version)));
    }
    return CreateOne(mapping, std::move(object));
  }
  if (!found) return Err(found.error());
  Json current = std::move(*found);
  const Json& metadata = current["metadata"];
  if (!object.uid.empty() && object.uid != metadata.value("uid", "")) {
    return Err(ConflictError(object.key.Describe() + ": uid " + object.uid + " was replaced by " +
                             metadata.value("uid", "")));
  }
  if (object.resource_version != 0 &&
      std::to_string(object.resource_version) != VersionOf(current)) {
    return Err(ConflictError(object.key.Describe() + ": version " +
                             std::to_string(object.resource_version) + " is stale (now " +
                             VersionOf(current) + ")"));
  }
  if (mapping.kind == "Pod") {
    const Json& spec = object.body.is_object() && object.body.contains("spec") ? object.body["spec"]
                                                                               : Json::object();
    const std::string wanted = spec.is_object() && spec.value("nodeName", Json()).is_string()
                                   ? spec["nodeName"].get<std::string>()
                                   : "";
    const std::string bound = current["spec"].value("nodeName", std::string());
    if (wanted != bound && !bound.empty()) {
      return Err(InvalidArgumentError("spec.nodeName: " + object.key.Describe() + " is bound to " +
                                      bound + "; a pod on Kubernetes cannot move or be unbound"));
    }
    if (wanted != bound) return BindOne(mapping, ns, std::move(object), std::move(current), wanted);
  }
  ASSIGN_OR_RETURN(Json desired, mapping.to_kube(object, &current));
  if (!mapping.status_subresource) {
    ASSIGN_OR_RETURN(current, client_.Update(mapping.resource, ns, desired));
    return FromKube(mapping, current);
  }
  if (WithoutStatus(desired) != WithoutStatus(current)) {
    ASSIGN_OR_RETURN(current, client_.Update(mapping.resource, ns, desired));
    object.resource_version = 0;  // the caller's precondition held for this write
    ASSIGN_OR_RETURN(desired, mapping.to_kube(object, &current));
  }
  if (desired.value("status", Json()) != current.value("status", Json())) {
    ASSIGN_OR_RETURN(current, WriteStatus(mapping, ns, desired));
  }
  return FromKube(mapping, current);
}

Result<store::Object> KubeStore::UpdateForeignPod(const KindMapping& mapping,
                                                  const store::Object& object,
                                                  const Json& current) {
  ASSIGN_OR_RETURN(std::optional<store::Object> read, Read(mapping, current));
  if (!read) {
    return Err(ConflictError(object.key.Describe() + " is not one of strata's, nor bound to node " +
                             options_.kubelet_node));
  }
  if (!object.uid.empty() && object.uid != read->uid) {
    return Err(ConflictError(object.key.Describe() + ": uid " + object.uid + " was replaced by " +
                             read->uid));
  }
  if (object.resource_version != 0 && object.resource_version != read->resource_version) {
    return Err(ConflictError(object.key.Describe() + ": version " +
                             std::to_string(object.resource_version) + " is stale (now " +
                             VersionOf(current) + ")"));
  }
  // A kubelet writes a pod's status, never its spec or metadata: they are its owner's.
  ASSIGN_OR_RETURN(Json desired, ForeignPodToKube(object, current));
  if (desired.value("status", Json()) == current.value("status", Json())) return std::move(*read);
  ASSIGN_OR_RETURN(Json written, WriteStatus(mapping, NamespaceOf(mapping, object.key), desired));
  ASSIGN_OR_RETURN(read, Read(mapping, written));
  if (!read) return Err(InternalError(object.key.Describe() + ": the written pod reads as none"));
  return std::move(*read);
}

Result<store::Object> KubeStore::BindOne(const KindMapping& mapping, const std::string& ns,
                                         store::Object object, Json current,
                                         const std::string& node_name) {
  // What the caller changed is judged against the version its precondition named (`current`),
  // before the binding moves the pod on: another writer may set its status as soon as it is
  // bound (kwok does), and a binding rewrites none of that.
  ASSIGN_OR_RETURN(Json desired, mapping.to_kube(object, &current));
  const bool status_changed = desired.value("status", Json()) != current.value("status", Json());
  // The metadata first (under the caller's precondition), then the binding: a crash in between
  // leaves an unbound pod that the scheduler places again, never a bound pod without what its
  // binder wrote beside the node (the bound-at time, a gang's placement).
  const std::string uid = current["metadata"].value("uid", std::string());
  if (WithoutStatus(desired) != WithoutStatus(current)) {
    ASSIGN_OR_RETURN(current, client_.Update(mapping.resource, ns, desired));
  }
  RETURN_IF_ERROR(client_.Bind(ns, object.key.name, node_name, uid));
  ASSIGN_OR_RETURN(current, client_.Get(mapping.resource, ns, object.key.name));
  if (status_changed) {
    object.resource_version = 0;  // the binding took the caller's precondition
    ASSIGN_OR_RETURN(desired, mapping.to_kube(object, &current));
    ASSIGN_OR_RETURN(current, WriteStatus(mapping, ns, desired));
  }
  return FromKube(mapping, current);
}

Result<Json> KubeStore::WriteStatus(const KindMapping& mapping, const std::string& ns,
                                    const Json& desired) {
  kube::WriteOptions status_write;
  status_write.subresource = "status";
  return client_.Update(mapping.resource, ns, desired, status_write);
}

Result<store::Object> KubeStore::DeleteOne(const KindMapping& mapping,
                                           const store::Object& object) {
  kube::DeleteOptions options;
  options.precondition_uid = object.uid;
  if (object.resource_version != 0) {
    options.precondition_resource_version = std::to_string(object.resource_version);
  }
  options.propagation = kube::PropagationPolicy::kBackground;
  // A pod's grace is strata's own (its controllers ask for the stop first, and its node agent
  // acts on the deletion): gone at once, as in every store, not left terminating for a kubelet
  // that never comes.
  if (mapping.kind == "Pod") options.grace_period_seconds = 0;
  ASSIGN_OR_RETURN(Json answer, client_.Delete(mapping.resource, NamespaceOf(mapping, object.key),
                                               object.key.name, options));
  ASSIGN_OR_RETURN(std::optional<store::Object> read, answer.value("kind", "") == "Status"
                                                          ? std::optional<store::Object>()
                                                          : Read(mapping, answer));
  if (!read) {
    store::Object gone;
    gone.key = object.key;
    return gone;
  }
  return std::move(*read);
}

}  // namespace strata::kubestore
