#include "api/manifest.h"

#include <algorithm>

#include "api/compat_schema.h"
#include "api/kinds.h"
#include "api/kube_common.h"
#include "api/served_form.h"
#include "api/served_model_name.h"
#include "common/yaml_json.h"

namespace strata::api {
namespace {

// A document with where it came from, for error messages.
struct Located {
  std::string source;
  int index = 0;  // 1-based within its source
  std::string kind;
  std::string name;
  DecodedDocument decoded;

  std::string Prefix() const {
    std::string out = source + ": document " + std::to_string(index);
    if (!kind.empty()) out += " (" + kind + (name.empty() ? "" : " " + name) + ")";
    return out;
  }
};

std::string StringField(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// What the user may have meant by an unknown apiVersion/kind pair.
std::string UnknownKindMessage(const std::string& api_version, const std::string& kind) {
  std::vector<std::string_view> versions;
  std::vector<std::string_view> kinds;
  for (const KindInfo& k : AllKinds()) {
    if (k.kind == kind) versions.push_back(k.api_version);
    if (std::find(kinds.begin(), kinds.end(), k.kind) == kinds.end()) kinds.push_back(k.kind);
  }
  if (!versions.empty()) {
    std::string list;
    for (std::string_view v : versions) list += (list.empty() ? "" : ", ") + std::string(v);
    return "unknown apiVersion " + Quoted(api_version) + " for kind " + kind + "; strata reads " +
           list;
  }
  std::string suggestion = SuggestClosest(kind, kinds);
  std::string message = "unknown kind " + Quoted(kind) + " in " + Quoted(api_version);
  if (!suggestion.empty()) message += "; did you mean " + Quoted(suggestion) + "?";
  return message + " (strata explain lists the kinds it reads)";
}

void DecodeOne(const nlohmann::json& document, DecodedDocument& out) {
  if (!document.is_object()) {
    out.errors.Add("",
                   "expected an object with apiVersion and kind, got " + DescribeValue(document));
    return;
  }
  std::string api_version = StringField(document, "apiVersion");
  std::string kind = StringField(document, "kind");
  if (api_version.empty() || kind.empty()) {
    if (api_version.empty()) out.errors.Add("apiVersion", "required field is missing");
    if (kind.empty()) out.errors.Add("kind", "required field is missing");
    return;
  }
  // What the REST API served under /api/v1 ("v1" Node) is the native kind.
  const KindInfo* info = FindKind(IsServedCoreForm(document) ? kApiVersion : api_version, kind);
  if (info == nullptr) {
    out.errors.Add("kind", UnknownKindMessage(api_version, kind));
    return;
  }
  ValidateAgainstSchema(document, *info->schema(), "", out.errors);
  if (!out.errors.empty()) return;
  info->decode(FieldView(document, ""), out);
  // A compatible kind's managed fields name its own fields, not those of the native objects it
  // becomes: the server records the write's own instead.
  const nlohmann::json& managed = FieldView(document, "").Object("metadata").Raw("managedFields");
  if (!info->native && !managed.is_null()) {
    out.errors.Warn("metadata.managedFields",
                    "ignored: they name the fields of " + std::string(kind) +
                        ", not of the strata object it becomes; the server records its own");
    for (Object& object : out.objects) object.metadata().managed_fields.clear();
  }
}

// The errors of one document decoded on its own, without a file and document prefix.
Status ErrorsStatus(const FieldErrors& errors) {
  if (errors.empty()) return Status::Ok();
  std::string message;
  for (const FieldError& e : errors.list()) {
    message += (message.empty() ? "" : "\n") + e.ToString();
  }
  return InvalidArgumentError(std::move(message));
}

Queue* FindQueue(std::vector<Located>& documents, std::string_view name) {
  for (Located& d : documents) {
    for (Object& o : d.decoded.objects) {
      Queue* q = o.As<Queue>();
      // A Cohort's Queue admits nothing: it is no ClusterQueue.
      if (q != nullptr && q->metadata.name == name && !q->spec.lend_only) return q;
    }
  }
  return nullptr;
}

void LinkLocalQueues(std::vector<Located>& documents) {
  for (Located& d : documents) {
    if (!d.decoded.local_queue) continue;
    const LocalQueueLink& link = *d.decoded.local_queue;
    Queue* queue = FindQueue(documents, link.cluster_queue);
    if (queue == nullptr) {
      d.decoded.errors.Add("spec.clusterQueue",
                           "ClusterQueue " + Quoted(link.cluster_queue) +
                               " is not among these manifests; apply a LocalQueue together with "
                               "its ClusterQueue");
      continue;
    }
    queue->spec.local_queues.push_back({link.namespace_name, link.name});
  }
}

// The priority a workload's kueue.x-k8s.io/priority-class label names, from a
// WorkloadPriorityClass among the same manifests (Kueue's rule: it wins over the pods' own). The
// label stays, as on Kueue's Job. A class not among the manifests is the server's to find among
// those it stores, when the workload is written (server/workload_priority.h).
void LinkPriorityClasses(std::vector<Located>& documents) {
  std::map<std::string, const Located*> classes;
  for (Located& d : documents) {
    if (!d.decoded.priority_class) continue;
    if (!classes.emplace(d.decoded.priority_class->name, &d).second) {
      d.decoded.errors.Add("metadata.name", "a second WorkloadPriorityClass " +
                                                Quoted(d.decoded.priority_class->name) +
                                                " among these manifests");
    }
  }
  for (Located& d : documents) {
    for (Object& o : d.decoded.objects) {
      auto& labels = o.metadata().labels;
      auto label = labels.find(std::string(kKueuePriorityClassLabel));
      if (label == labels.end()) continue;
      auto found = classes.find(label->second);
      if (found == classes.end()) continue;
      int64_t value = found->second->decoded.priority_class->value;
      if (Job* job = o.As<Job>()) job->spec.priority = value;
      if (Pod* pod = o.As<Pod>()) pod->spec.priority = value;
      if (Service* service = o.As<Service>()) service->spec.priority = value;
    }
  }
}

void LinkPodGroups(std::vector<Located>& documents) {
  for (Located& group_doc : documents) {
    if (!group_doc.decoded.pod_group) continue;
    const PodGroupLink& group = *group_doc.decoded.pod_group;
    int members = 0;
    for (Located& d : documents) {
      for (Object& o : d.decoded.objects) {
        Pod* pod = o.As<Pod>();
        if (pod == nullptr || pod->metadata.namespace_name != group.namespace_name) continue;
        auto it = pod->metadata.annotations.find(std::string(kVolcanoGroupNameAnnotation));
        if (it == pod->metadata.annotations.end() || it->second != group.name) continue;
        ++members;
        pod->spec.gang = {group.name, group.min_member, group.min_resources};
        if (!group.queue.empty()) pod->spec.queue = group.queue;
        if (group.priority) pod->spec.priority = *group.priority;
      }
    }
    if (members == 0) {
      group_doc.decoded.errors.Add(
          "metadata.name", "no pod among these manifests belongs to PodGroup " +
                               Quoted(group.name) +
                               " (annotation scheduling.k8s.io/group-name); apply the group with "
                               "its pods");
    }
  }
}

// Pods that name a Volcano PodGroup absent from the manifests would silently run without
// their gang; that is an error.
void RejectPodsWithoutTheirGroup(std::vector<Located>& documents) {
  for (Located& d : documents) {
    for (Object& o : d.decoded.objects) {
      Pod* pod = o.As<Pod>();
      if (pod == nullptr || !pod->spec.gang.name.empty()) continue;
      auto it = pod->metadata.annotations.find(std::string(kVolcanoGroupNameAnnotation));
      if (it == pod->metadata.annotations.end()) continue;
      d.decoded.errors.Add(KeyPath("metadata.annotations", it->first),
                           "PodGroup " + Quoted(it->second) +
                               " is not among these manifests; apply the pods with their group");
    }
  }
}

bool SameRuntime(const TrainingRuntimeLink& a, const TrainingRuntimeLink& b) {
  return a.kind == b.kind && a.namespace_name == b.namespace_name && a.name == b.name;
}

// Two runtimes of one name would make a TrainJob's defaults depend on document order.
void RejectDuplicateRuntimes(std::vector<Located>& documents) {
  for (size_t i = 0; i < documents.size(); ++i) {
    if (!documents[i].decoded.training_runtime) continue;
    const TrainingRuntimeLink& runtime = *documents[i].decoded.training_runtime;
    for (size_t j = 0; j < i; ++j) {
      if (documents[j].decoded.training_runtime &&
          SameRuntime(*documents[j].decoded.training_runtime, runtime)) {
        documents[i].decoded.errors.Add(
            "metadata.name", "a second " + runtime.kind + " " + Quoted(runtime.name) +
                                 " among these manifests (the first is " + documents[j].Prefix() +
                                 ")");
        break;
      }
    }
  }
}

// Each TrainJob becomes a Job with the defaults of the runtime its runtimeRef names: one among
// the manifests, else the built-in torch-distributed, else an error.
void LinkTrainJobs(std::vector<Located>& documents) {
  for (Located& d : documents) {
    if (!d.decoded.train_job) continue;
    const TrainJobLink& job = *d.decoded.train_job;
    const std::string& job_namespace = job.job.metadata.namespace_name;
    const Located* found = nullptr;
    const TrainingRuntimeLink* other_namespace = nullptr;
    for (const Located& r : documents) {
      if (!r.decoded.training_runtime) continue;
      const TrainingRuntimeLink& runtime = *r.decoded.training_runtime;
      if (runtime.kind != job.runtime_kind || runtime.name != job.runtime_name) continue;
      if (runtime.kind == "TrainingRuntime" && runtime.namespace_name != job_namespace) {
        other_namespace = &runtime;
        continue;
      }
      found = &r;
      break;
    }
    if (found != nullptr) {
      // A runtime with errors fails the apply with its own; resolving against it adds noise.
      if (found->decoded.errors.empty()) {
        ResolveTrainJob(job, *found->decoded.training_runtime, d.decoded);
      }
      continue;
    }
    const TrainingRuntimeLink& built_in = BuiltInTorchDistributed();
    if (job.runtime_kind == built_in.kind && job.runtime_name == built_in.name) {
      ResolveTrainJob(job, built_in, d.decoded);
      continue;
    }
    std::string message =
        job.runtime_kind + " " + Quoted(job.runtime_name) + " is not among these manifests";
    if (other_namespace != nullptr) {
      message += " in namespace " + Quoted(job_namespace) + " (one is in namespace " +
                 Quoted(other_namespace->namespace_name) +
                 "; a TrainJob uses a TrainingRuntime of its own namespace)";
    }
    d.decoded.errors.Add("spec.runtimeRef.name",
                         message +
                             "; apply the runtime together with the TrainJob (strata has the "
                             "ClusterTrainingRuntime torch-distributed built in)");
  }
}

// Each ScaledObject sets the autoscaling of the Service its target became: the Deployment,
// StatefulSet or LeaderWorkerSet among the manifests that scaleTargetRef names. One per target,
// as KEDA allows.
void LinkScaledObjects(std::vector<Located>& documents) {
  std::map<const Service*, const Located*> scaled;
  for (Located& d : documents) {
    if (!d.decoded.scaled_object) continue;
    const ScaledObjectLink& link = *d.decoded.scaled_object;
    Service* target = nullptr;
    for (Located& t : documents) {
      if (t.kind != link.target_kind) continue;
      for (Object& o : t.decoded.objects) {
        Service* service = o.As<Service>();
        if (service != nullptr && service->metadata.name == link.target_name &&
            service->metadata.namespace_name == link.namespace_name) {
          target = service;
        }
      }
    }
    if (target == nullptr) {
      d.decoded.errors.Add("spec.scaleTargetRef.name",
                           link.target_kind + " " + Quoted(link.target_name) +
                               " is not among these manifests in namespace " +
                               Quoted(link.namespace_name) +
                               "; apply a ScaledObject together with its target");
      continue;
    }
    if (auto [other, added] = scaled.emplace(target, &d); !added) {
      d.decoded.errors.Add("spec.scaleTargetRef.name",
                           link.target_kind + " " + Quoted(link.target_name) +
                               " is already scaled by " + other->second->Prefix());
      continue;
    }
    target->spec.min_replicas = link.min_replicas;
    target->spec.max_replicas = link.max_replicas;
    target->spec.autoscaling.metric = link.autoscaling.metric;
    target->spec.autoscaling.target = link.autoscaling.target;
    target->spec.autoscaling.scale_to_zero_after = link.autoscaling.scale_to_zero_after;
  }
}

bool HasLabels(const ObjectMeta& meta, const std::map<std::string, std::string>& wanted) {
  for (const auto& [key, value] : wanted) {
    auto it = meta.labels.find(key);
    if (it == meta.labels.end() || it->second != value) return false;
  }
  return true;
}

// Each InferencePool selects the Services of the Deployments, StatefulSets and LeaderWorkerSets
// among the manifests, in its namespace, whose pods carry its matchLabels; each then serves the
// model name its vLLM engine answers to (a LeaderWorkerSet's leader runs the server), as GAIE's
// clients name it. A Service in two pools, or two selected Services serving one name, is an
// error: the gateway routes one Service per model name. Returns the Services of each pool, by
// "namespace/name".
std::map<std::string, std::vector<Service*>> LinkInferencePools(std::vector<Located>& documents) {
  std::map<std::string, std::vector<Service*>> selected;
  std::map<const Service*, const Located*> pooled;
  for (Located& d : documents) {
    if (!d.decoded.inference_pool) continue;
    const InferencePoolLink& link = *d.decoded.inference_pool;
    std::vector<Service*>& members = selected[link.namespace_name + "/" + link.name];
    std::map<std::string, const Service*> served_by;
    for (Located& t : documents) {
      if (t.kind != "Deployment" && t.kind != "StatefulSet" && t.kind != "LeaderWorkerSet") {
        continue;
      }
      for (Object& o : t.decoded.objects) {
        Service* service = o.As<Service>();
        if (service == nullptr || service->metadata.namespace_name != link.namespace_name ||
            !HasLabels(service->metadata, link.match_labels)) {
          continue;
        }
        const std::string described = t.kind + " " + Quoted(service->metadata.name);
        if (auto [other, added] = pooled.emplace(service, &d); !added) {
          d.decoded.errors.Add(
              "spec.selector.matchLabels",
              "selects " + described + ", which " + other->second->Prefix() + " selects already");
          continue;
        }
        const std::vector<std::string> names = VllmServedModelNames(
            service->spec.leader ? *service->spec.leader : service->spec.engine);
        if (names.empty()) {
          d.decoded.errors.Warn("spec.selector.matchLabels",
                                "selects " + described +
                                    ", whose engine is no vLLM server naming its model; clients "
                                    "call it as model " +
                                    Quoted(service->spec.model));
        } else {
          service->spec.model = names.front();
          for (size_t i = 1; i < names.size(); ++i) {
            d.decoded.errors.Warn("spec.selector.matchLabels",
                                  described + " serves " + Quoted(names[i]) +
                                      " too; strata's gateway routes its first served name, " +
                                      Quoted(names.front()));
          }
        }
        if (auto [other, added] = served_by.emplace(service->spec.model, service); !added) {
          d.decoded.errors.Add("spec.selector.matchLabels",
                               "selects " + described + " and " +
                                   Quoted(other->second->metadata.name) +
                                   ", which both serve model " + Quoted(service->spec.model) +
                                   "; strata's gateway routes one Service per model name");
          continue;
        }
        members.push_back(service);
      }
    }
    if (members.empty()) {
      d.decoded.errors.Warn("spec.selector.matchLabels",
                            "selects no Deployment, StatefulSet or LeaderWorkerSet among these "
                            "manifests in namespace " +
                                Quoted(link.namespace_name) + ": the pool routes nothing");
    }
  }
  return selected;
}

// Each InferenceObjective becomes an objective of every Service its pool selects.
void LinkInferenceObjectives(std::vector<Located>& documents,
                             const std::map<std::string, std::vector<Service*>>& pools) {
  for (Located& d : documents) {
    if (!d.decoded.inference_objective) continue;
    const InferenceObjectiveLink& link = *d.decoded.inference_objective;
    auto pool = pools.find(link.namespace_name + "/" + link.pool_name);
    if (pool == pools.end()) {
      d.decoded.errors.Add("spec.poolRef.name",
                           "InferencePool " + Quoted(link.pool_name) +
                               " is not among these manifests in namespace " +
                               Quoted(link.namespace_name) +
                               "; apply an InferenceObjective together with its pool");
      continue;
    }
    for (Service* service : pool->second) {
      service->spec.objectives.push_back({link.name, link.priority});
    }
  }
}

}  // namespace

namespace {

Result<std::vector<Object>> DecodeAll(const std::vector<ParsedSource>& sources,
                                      std::vector<std::string> source_errors,
                                      std::vector<std::string>* warnings) {
  std::vector<Located> documents;
  for (const ParsedSource& source : sources) {
    int index = 0;
    for (const YamlDocument& doc : source.documents) {
      Located located;
      located.source = source.name;
      located.index = ++index;
      located.kind = StringField(doc.value, "kind");
      if (doc.value.is_object()) {
        auto metadata = doc.value.find("metadata");
        if (metadata != doc.value.end()) {
          located.name = StringField(*metadata, "name");
          if (located.name.empty()) located.name = StringField(*metadata, "generateName");
        }
      }
      DecodeOne(doc.value, located.decoded);
      documents.push_back(std::move(located));
    }
  }
  LinkLocalQueues(documents);
  LinkPodGroups(documents);
  RejectPodsWithoutTheirGroup(documents);
  RejectDuplicateRuntimes(documents);
  LinkTrainJobs(documents);
  LinkPriorityClasses(documents);
  LinkScaledObjects(documents);
  LinkInferenceObjectives(documents, LinkInferencePools(documents));

  std::string message;
  for (const std::string& e : source_errors) message += (message.empty() ? "" : "\n") + e;
  std::vector<Object> objects;
  for (Located& d : documents) {
    for (const FieldError& e : d.decoded.errors.list()) {
      message += (message.empty() ? "" : "\n") + d.Prefix() + ": " + e.ToString();
    }
    for (Object& o : d.decoded.objects) objects.push_back(std::move(o));
  }
  if (!message.empty()) return Err(InvalidArgumentError(std::move(message)));
  if (warnings != nullptr) {
    for (const Located& d : documents) {
      for (const FieldError& w : d.decoded.errors.warnings()) {
        warnings->push_back(d.Prefix() + ": " + w.ToString());
      }
    }
  }
  return objects;
}

}  // namespace

Result<std::vector<Object>> DecodeManifests(const std::vector<ManifestSource>& sources,
                                            std::vector<std::string>* warnings) {
  std::vector<ParsedSource> parsed_sources;
  std::vector<std::string> source_errors;
  for (const ManifestSource& source : sources) {
    size_t bad_byte = InvalidUtf8Offset(source.text);
    if (bad_byte != std::string_view::npos) {
      source_errors.push_back(source.name + ": byte offset " + std::to_string(bad_byte) +
                              ": invalid UTF-8; manifests are UTF-8 text");
      continue;
    }
    Result<std::vector<YamlDocument>> parsed = ParseYamlDocuments(source.text);
    if (!parsed) {
      source_errors.push_back(source.name + ": " + parsed.error().message());
      continue;
    }
    parsed_sources.push_back({source.name, std::move(*parsed)});
  }
  return DecodeAll(parsed_sources, std::move(source_errors), warnings);
}

Result<std::vector<Object>> DecodeParsedManifests(const std::vector<ParsedSource>& sources,
                                                  std::vector<std::string>* warnings) {
  return DecodeAll(sources, {}, warnings);
}

Result<Object> DecodeObject(const nlohmann::json& document) {
  DecodedDocument decoded;
  DecodeOne(document, decoded);
  // Alone, a TrainJob can only have the built-in runtime.
  if (decoded.errors.empty() && decoded.train_job) {
    const TrainingRuntimeLink& built_in = BuiltInTorchDistributed();
    if (decoded.train_job->runtime_kind == built_in.kind &&
        decoded.train_job->runtime_name == built_in.name) {
      ResolveTrainJob(*decoded.train_job, built_in, decoded);
    } else {
      decoded.errors.Add("spec.runtimeRef.name",
                         "a TrainJob decoded on its own has only the built-in torch-distributed "
                         "runtime; decode it with its runtime");
    }
  }
  if (decoded.errors.empty() && decoded.objects.size() != 1) {
    decoded.errors.Add("kind", "this kind only links other documents; decode it with them");
  }
  RETURN_IF_ERROR(ErrorsStatus(decoded.errors));
  return std::move(decoded.objects.front());
}

Result<LocalQueueLink> DecodeLocalQueueObject(const nlohmann::json& document) {
  DecodedDocument decoded;
  DecodeOne(document, decoded);
  if (decoded.errors.empty() && !decoded.local_queue) {
    decoded.errors.Add("kind", "expected a kueue.x-k8s.io LocalQueue");
  }
  RETURN_IF_ERROR(ErrorsStatus(decoded.errors));
  return *decoded.local_queue;
}

}  // namespace strata::api
