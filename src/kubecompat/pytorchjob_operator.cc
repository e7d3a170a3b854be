#include "kubecompat/pytorchjob_operator.h"

#include <spdlog/spdlog.h>

#include "api/annotations.h"
#include "api/custom_resources.h"
#include "api/encode.h"
#include "api/manifest.h"
#include "api/resource_catalog.h"
#include "cluster/indexes.h"
#include "kubecompat/pytorchjob_status.h"

namespace strata::kubecompat {
namespace {

using json = nlohmann::json;

const kube::GroupVersionResource kPyTorchJobs{"kubeflow.org", "v1", "pytorchjobs"};
const kube::GroupVersionResource kDefinitions{"apiextensions.k8s.io", "v1",
                                              "customresourcedefinitions"};
constexpr const char* kDefinitionName = "pytorchjobs.kubeflow.org";
// Deltas applied in one pass at most, so that a flood of changes still lets it reconcile.
constexpr int kMaxDeltasPerPass = 1000;

kube::GroupVersionResource StrataJobs() {
  const api::ResourceType* type = api::FindResourceTypeByKind("Job");
  return {std::string(type->group), std::string(type->version), std::string(type->plural)};
}

const json& Metadata(const json& object) {
  static const json kEmpty = json::object();
  if (!object.is_object()) return kEmpty;
  auto found = object.find("metadata");
  return found != object.end() && found->is_object() ? *found : kEmpty;
}

std::string MetadataString(const json& object, const char* field) {
  const json& value = Metadata(object).value(field, json());
  return value.is_string() ? value.get<std::string>() : "";
}

// The PyTorchJob as a user wrote it, without what the server keeps in its metadata (uid,
// managedFields, ...) and without its status, for the decoder.
json AsManifest(const json& pytorchjob) {
  json metadata = {{"name", MetadataString(pytorchjob, "name")},
                   {"namespace", MetadataString(pytorchjob, "namespace")}};
  for (const char* map : {"labels", "annotations"}) {
    const json& value = Metadata(pytorchjob).value(map, json());
    if (value.is_object() && !value.empty()) metadata[map] = value;
  }
  json annotations = metadata.value("annotations", json::object());
  // kubectl apply's record of what was applied is not the job's.
  annotations.erase("kubectl.kubernetes.io/last-applied-configuration");
  if (annotations.empty()) {
    metadata.erase("annotations");
  } else {
    metadata["annotations"] = std::move(annotations);
  }
  return {{"apiVersion", pytorchjob.value("apiVersion", "kubeflow.org/v1")},
          {"kind", "PyTorchJob"},
          {"metadata", std::move(metadata)},
          {"spec", pytorchjob.value("spec", json::object())}};
}

}  // namespace

std::vector<json> PyTorchJobOperatorRules() {
  return {
      {{"apiGroups", {kDefinitions.group}},
       {"resources", {kDefinitions.resource}},
       {"resourceNames", {kDefinitionName}},
       {"verbs", {"get"}}},
      {{"apiGroups", {kPyTorchJobs.group}},
       {"resources", {kPyTorchJobs.resource}},
       {"verbs", {"get", "list", "watch"}}},
      // The Jobs it makes block their owner's deletion until the garbage collector deleted
      // them, which OwnerReferencesPermissionEnforcement lets only an updater of the
      // owner's finalizers ask.
      {{"apiGroups", {kPyTorchJobs.group}},
       {"resources", {kPyTorchJobs.resource + "/status", kPyTorchJobs.resource + "/finalizers"}},
       {"verbs", {"get", "update"}}}};
}

PyTorchJobOperator::PyTorchJobOperator(kube::Client& client, cluster::Cache& cache,
                                       const Clock& clock, PyTorchJobOperatorOptions options)
    : client_(client), cache_(cache), clock_(clock), options_(options) {}

PyTorchJobOperator::~PyTorchJobOperator() = default;

Result<bool> PyTorchJobOperator::Owned() {
  const TimePoint now = clock_.Now();
  if (owned_ && now < next_ownership_check_) return *owned_;
  Result<json> definition = client_.Get(kDefinitions, "", kDefinitionName);
  bool owned = false;
  std::string why;
  if (definition) {
    owned = api::IsStrataDefinition(*definition);
    why = owned ? "strata's CRD is installed: strata runs them"
                : "the CRD is not strata's (Kubeflow's training operator runs them): strata "
                  "only schedules their pods";
  } else if (definition.error().code() == StatusCode::kNotFound) {
    why = "no CRD is installed (strata kubernetes manifests --compat-crds installs strata's)";
  } else {
    return Err(definition.error());
  }
  if (owned_ != owned) {
    spdlog::info("strata: kubeflow.org/v1 PyTorchJobs: {}", why);
  }
  if (!owned) {
    reflector_.reset();
    pytorchjobs_.clear();
    dirty_.clear();
  } else if (!reflector_) {
    reflector_ = std::make_unique<kube::Reflector>(&client_, kPyTorchJobs);
    cursor_ = 0;  // everything again: what happened while not owned is unknown
  }
  owned_ = owned;
  next_ownership_check_ = now + options_.ownership_recheck;
  return owned;
}

Status PyTorchJobOperator::Follow() {
  Duration wait = options_.watch_wait;
  for (int i = 0; i < kMaxDeltasPerPass; ++i) {
    Result<kube::Delta> delta = reflector_->Next(wait);
    wait = std::chrono::milliseconds(1);
    if (!delta) {
      if (delta.error().code() == StatusCode::kDeadlineExceeded) return Status::Ok();
      return delta.error();
    }
    auto key_of = [](const json& object) {
      return Key{MetadataString(object, "namespace"), MetadataString(object, "name")};
    };
    switch (delta->type) {
      case kube::DeltaType::kReplace:
        pytorchjobs_.clear();
        for (json& item : delta->items) {
          Key key = key_of(item);
          dirty_.insert(key);
          pytorchjobs_[key] = std::move(item);
        }
        break;
      case kube::DeltaType::kAdded:
      case kube::DeltaType::kModified: {
        Key key = key_of(delta->object);
        dirty_.insert(key);
        pytorchjobs_[key] = std::move(delta->object);
        break;
      }
      case kube::DeltaType::kDeleted:
        // Its Job goes with it through the garbage collector.
        pytorchjobs_.erase(key_of(delta->object));
        break;
      case kube::DeltaType::kBookmark:
        break;
    }
  }
  return Status::Ok();
}

Status PyTorchJobOperator::RunOnce() {
  Result<bool> owned = Owned();
  if (!owned) return owned.error();
  if (!*owned) return Status::Ok();
  if (Status synced = cache_.Sync(); !synced.ok()) return synced;
  if (Status followed = Follow(); !followed.ok()) return followed;
  cluster::Changes changes = cache_.ChangesSince(cursor_, {"Job", "Pod"});
  cursor_ = changes.cursor;
  if (changes.resync) {
    for (const auto& [key, ignored] : pytorchjobs_) dirty_.insert(key);
  } else {
    for (const cluster::Change& change : changes.changes) {
      if (change.key.kind == "Job") {
        dirty_.insert({change.key.namespace_name, change.key.name});
        continue;
      }
      const cluster::ObjectRef& pod = change.current ? change.current : change.last;
      const api::Pod* value = pod ? pod->As<api::Pod>() : nullptr;
      if (value != nullptr && value->spec.owner.kind == "Job") {
        dirty_.insert({change.key.namespace_name, value->spec.owner.name});
      }
    }
  }
  std::set<Key> dirty;
  dirty.swap(dirty_);
  Status first = Status::Ok();
  for (const Key& key : dirty) {
    auto found = pytorchjobs_.find(key);
    if (found == pytorchjobs_.end()) continue;
    Status status = Reconcile(key, found->second);
    if (!status.ok()) {
      dirty_.insert(key);  // again next pass
      if (first.ok()) first = status;
    }
  }
  return first;
}

Status PyTorchJobOperator::Reconcile(const Key& key, const json& pytorchjob) {
  if (Metadata(pytorchjob).contains("deletionTimestamp")) return Status::Ok();
  const std::string uid = MetadataString(pytorchjob, "uid");
  cluster::ObjectRef ref = cache_.Get({"Job", key.first, key.second});
  if (!ref) return CreateJob(key, pytorchjob);
  const api::Job* job = ref->As<api::Job>();
  const std::string* owner_uid = nullptr;
  if (job != nullptr) {
    auto it = job->metadata.annotations.find(api::kPyTorchJobUidAnnotation);
    if (it != job->metadata.annotations.end()) owner_uid = &it->second;
  }
  if (owner_uid == nullptr) {
    return WriteStatus(pytorchjob,
                       RefusedStatus(pytorchjob,
                                     "strata Job " + key.first + "/" + key.second +
                                         " exists and is not this PyTorchJob's; delete it or "
                                         "name the PyTorchJob otherwise",
                                     clock_.Now()));
  }
  // The Job of an earlier PyTorchJob of this name, which the garbage collector is deleting:
  // its deletion (a change in the cache) brings the key back.
  if (*owner_uid != uid) return Status::Ok();
  std::vector<api::Pod> pods;
  for (const cluster::ObjectRef& pod : cache_.Indexed(
           cluster::kPodsByOwner, cluster::OwnerIndexValue("Job", key.first, key.second))) {
    if (const api::Pod* value = pod->As<api::Pod>()) pods.push_back(*value);
  }
  return WriteStatus(pytorchjob, PyTorchJobStatus(pytorchjob, *job, pods, clock_.Now()));
}

Status PyTorchJobOperator::CreateJob(const Key& key, const json& pytorchjob) {
  Result<api::Object> decoded = api::DecodeObject(AsManifest(pytorchjob));
  if (!decoded || decoded->As<api::Job>() == nullptr) {
    std::string why = decoded ? "it does not describe a job" : decoded.error().message();
    return WriteStatus(pytorchjob, RefusedStatus(pytorchjob, why, clock_.Now()));
  }
  api::Job& job = *decoded->As<api::Job>();
  const std::string uid = MetadataString(pytorchjob, "uid");
  job.metadata.annotations[api::kPyTorchJobUidAnnotation] = uid;
  json body = api::EncodeObject(*decoded);
  body.erase("status");
  json metadata = {{"name", key.second},
                   {"namespace", key.first},
                   {"annotations", job.metadata.annotations},
                   {"ownerReferences",
                    {{{"apiVersion", kPyTorchJobs.ApiVersion()},
                      {"kind", "PyTorchJob"},
                      {"name", key.second},
                      {"uid", uid},
                      {"controller", true},
                      {"blockOwnerDeletion", true}}}}};
  if (!job.metadata.labels.empty()) metadata["labels"] = job.metadata.labels;
  body["metadata"] = std::move(metadata);
  Result<json> created = client_.Create(StrataJobs(), key.first, body);
  if (!created && created.error().code() != StatusCode::kAlreadyExists) return created.error();
  if (created) {
    spdlog::info("strata: PyTorchJob {}/{} runs as strata Job {}/{}", key.first, key.second,
                 key.first, key.second);
  }
  return WriteStatus(pytorchjob, PyTorchJobStatus(pytorchjob, job, {}, clock_.Now()));
}

Status PyTorchJobOperator::WriteStatus(const json& pytorchjob, json status) {
  if (!StatusChanged(pytorchjob, status)) return Status::Ok();
  json object = pytorchjob;
  object["status"] = std::move(status);
  kube::WriteOptions options;
  options.subresource = "status";
  Result<json> written =
      client_.Update(kPyTorchJobs, MetadataString(pytorchjob, "namespace"), object, options);
  if (!written) {
    // Changed since it was read, or gone: the watch brings the news, and the key with it.
    StatusCode code = written.error().code();
    if (code == StatusCode::kConflict || code == StatusCode::kNotFound) return Status::Ok();
    return written.error();
  }
  pytorchjobs_[{MetadataString(*written, "namespace"), MetadataString(*written, "name")}] =
      *written;
  return Status::Ok();
}

}  // namespace strata::kubecompat
