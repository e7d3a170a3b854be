// Kubeflow's kubeflow.org/v1 PyTorchJob, decoded into a native Job, and the processes-per-node
// setting it shares with Kubeflow Trainer's TrainJob (decode_trainer.cc).
#include <algorithm>

#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/kube_common.h"
#include "api/native_schema.h"

namespace strata::api {
namespace {

using T = FieldType;

const TypeSchema* ReplicaSpecSchema() {
  static const TypeSchema s{
      "ReplicaSpec",
      "One replica type of a PyTorchJob.",
      {{"replicas", T::kNonNegativeInteger, "How many pods of this type (default 1)."},
       {"restartPolicy",
        T::kEnum,
        "OnFailure, Never or ExitCode; strata restarts the whole group on a failure, up to "
        "maxRestarts.",
        nullptr,
        {"OnFailure", "Never", "ExitCode"}},
       {"template", T::kObject, "The pod template.", KubePodTemplateSchema, {}, true}}};
  return &s;
}

const TypeSchema* SchedulingPolicySchema() {
  static const TypeSchema s{
      "SchedulingPolicy",
      "Gang scheduling settings.",
      {{"minAvailable", T::kNonNegativeInteger,
        "strata places the whole job: must equal the total replicas."},
       {"queue", T::kString, "The queue that admits the job."},
       {"priorityClass", T::kString, "critical, standard, sheddable, system-*-critical."},
       {"minResources", T::kUnsupported, "strata computes the gang's resources from its pods"}}};
  return &s;
}

const TypeSchema* RunPolicySchema() {
  static const TypeSchema s{
      "RunPolicy",
      "How the job runs and ends.",
      {{"cleanPodPolicy",
        T::kEnum,
        "None (default), Running or All.",
        nullptr,
        {"None", "Running", "All"}},
       {"activeDeadlineSeconds", T::kNonNegativeInteger, "Becomes the job's runtimeLimit."},
       {"backoffLimit", T::kNonNegativeInteger,
        "Becomes maxRestarts when elasticPolicy.maxRestarts is absent."},
       {"schedulingPolicy", T::kObject, "Gang scheduling settings.", SchedulingPolicySchema},
       {"ttlSecondsAfterFinished", T::kUnsupported, "strata keeps finished jobs until deleted"},
       {"suspend", T::kBool,
        "true: wait for the queue's admission (Kueue's convention); needs a queue (the "
        "kueue.x-k8s.io/queue-name label or schedulingPolicy.queue)."},
       {"managedBy", T::kUnsupported, "strata manages every job it admits"}}};
  return &s;
}

const TypeSchema* ElasticPolicySchema() {
  static const TypeSchema s{
      "ElasticPolicy",
      "torchrun settings.",
      {{"maxRestarts", T::kNonNegativeInteger, "Whole-group restarts: the job's maxRestarts."},
       {"nProcPerNode", T::kNonNegativeInteger, "Processes per node (older name of nprocPerNode)."},
       {"minReplicas", T::kUnsupported, "strata's gangs have a fixed size"},
       {"maxReplicas", T::kUnsupported, "strata's gangs have a fixed size"},
       {"rdzvBackend", T::kUnsupported, "strata provides the rendezvous (MASTER_ADDR/PORT)"},
       {"rdzvHost", T::kUnsupported, "strata provides the rendezvous (MASTER_ADDR/PORT)"},
       {"rdzvPort", T::kUnsupported, "strata provides the rendezvous (MASTER_ADDR/PORT)"},
       {"rdzvId", T::kUnsupported, "strata provides the rendezvous (MASTER_ADDR/PORT)"},
       {"rdzvConf", T::kUnsupported, "strata provides the rendezvous (MASTER_ADDR/PORT)"},
       {"metrics", T::kUnsupported, "strata's gangs have a fixed size"}}};
  return &s;
}

const TypeSchema* PyTorchJobSpecSchema() {
  static const TypeSchema s{
      "PyTorchJobSpec",
      "A PyTorch distributed job.",
      {{"pytorchReplicaSpecs",
        T::kObjectMap,
        "Master and Worker replica specs.",
        ReplicaSpecSchema,
        {},
        true},
       {"runPolicy", T::kObject, "How the job runs and ends.", RunPolicySchema},
       {"elasticPolicy", T::kObject, "torchrun settings.", ElasticPolicySchema},
       {"nprocPerNode", T::kIntOrString,
        "Processes per node: a number, \"gpu\" or \"auto\" (the GPUs per node, else 1), or "
        "\"cpu\" (the whole CPUs per node)."}}};
  return &s;
}

const TypeSchema* JobConditionSchema() {
  static const TypeSchema s{
      "JobCondition",
      "One state the job is or was in; the newest is last.",
      {{"type",
        T::kEnum,
        "Created, Running, Restarting, Succeeded, Failed or Suspended.",
        nullptr,
        {"Created", "Running", "Restarting", "Succeeded", "Failed", "Suspended"},
        true},
       {"status", T::kEnum, "True, False or Unknown.", nullptr, {"True", "False", "Unknown"}, true},
       {"reason", T::kString, "Why, in one CamelCase word (PyTorchJobSucceeded)."},
       {"message", T::kString, "Why, for people."},
       {"lastUpdateTime", T::kTimestamp, "When the condition was last written."},
       {"lastTransitionTime", T::kTimestamp, "When its status last changed."}}};
  return &s;
}

const TypeSchema* ReplicaStatusSchema() {
  static const TypeSchema s{"ReplicaStatus",
                            "The pods of one replica type.",
                            {{"active", T::kNonNegativeInteger, "Pods running."},
                             {"succeeded", T::kNonNegativeInteger, "Pods that succeeded."},
                             {"failed", T::kNonNegativeInteger, "Pods that failed."},
                             {"selector", T::kString, "The label selector of the type's pods."}}};
  return &s;
}

void RejectPodLevelFields(const FieldView& pod_spec, FieldErrors& errors) {
  for (const char* field : {"restartPolicy", "nodeName", "priority", "priorityClassName"}) {
    if (pod_spec.Has(field)) {
      errors.Add(pod_spec.PathOf(field),
                 "set per job, not per pod template (restartPolicy on the replica spec, priority "
                 "in runPolicy.schedulingPolicy.priorityClass)");
    }
  }
}

}  // namespace

int64_t ProcPerNodeSetting::Resolve(const ResourceRequest& resources) const {
  if (count > 0) return count;
  int64_t whole = word == "cpu" ? resources.cpu.milli() / 1000 : resources.gpu.milli() / 1000;
  return std::max<int64_t>(1, whole);
}

std::optional<ProcPerNodeSetting> ReadProcPerNode(const FieldView& parent, std::string_view field,
                                                  FieldErrors& errors) {
  const nlohmann::json& v = parent.Raw(field);
  if (v.is_null()) return std::nullopt;
  if (v.is_number_integer()) {
    if (v.get<int64_t>() < 1) {
      errors.Add(parent.PathOf(field), "must be at least 1");
      return std::nullopt;
    }
    return ProcPerNodeSetting{v.get<int64_t>(), ""};
  }
  std::string text = v.get<std::string>();
  if (text == "auto" || text == "gpu" || text == "cpu") return ProcPerNodeSetting{0, text};
  if (!text.empty() && text.size() < 7 &&
      text.find_first_not_of("0123456789") == std::string::npos && std::stoll(text) > 0) {
    return ProcPerNodeSetting{std::stoll(text), ""};
  }
  errors.Add(parent.PathOf(field),
             "expected a positive number, \"auto\", \"gpu\" or \"cpu\", got " + Quoted(text));
  return std::nullopt;
}

const TypeSchema* PyTorchJobSchema() {
  static const TypeSchema s = CompatDocument(
      "PyTorchJob", "kubeflow.org/v1", "A Kubeflow PyTorch distributed job.", PyTorchJobSpecSchema);
  return &s;
}

const TypeSchema* KubeflowJobStatusSchema() {
  static const TypeSchema s{
      "JobStatus",
      "What strata reports of the job: it runs the job as a strata Job of the same name, and "
      "mirrors that Job's state here.",
      {{"conditions", T::kObjectList, "The job's states, the newest last.", JobConditionSchema},
       {"replicaStatuses", T::kObjectMap, "Pods by replica type (Master, Worker).",
        ReplicaStatusSchema},
       {"startTime", T::kTimestamp, "When every pod of the job first ran."},
       {"completionTime", T::kTimestamp, "When the job succeeded or failed."},
       {"lastReconcileTime", T::kTimestamp, "When strata last wrote this status."}}};
  return &s;
}

void DecodePyTorchJob(const FieldView& doc, DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  Job job;
  job.metadata = DecodeMetadata(doc.Object("metadata"), true, true, errors);
  job.spec.queue = TakeQueueLabel(job.metadata);
  FieldView spec = doc.Object("spec");
  FieldView replica_specs = spec.Object("pytorchReplicaSpecs");
  const nlohmann::json& types = replica_specs.json();
  std::optional<FieldView> template_owner;
  int64_t replicas = 0;
  for (auto it = types.begin(); it != types.end(); ++it) {
    FieldView replica(it.value(), replica_specs.PathOf(it.key()));
    if (it.key() != "Master" && it.key() != "Worker") {
      std::string suggestion = SuggestClosest(it.key(), {"Master", "Worker"});
      errors.Add(replica.path(),
                 "unknown replica type; PyTorchJob has Master and Worker" +
                     (suggestion.empty() ? "" : "; did you mean " + Quoted(suggestion) + "?"));
      continue;
    }
    int64_t count = replica.Integer("replicas", 1);
    if (it.key() == "Master" && count != 1) {
      errors.Add(replica.PathOf("replicas"), "a PyTorchJob has exactly one Master");
    }
    ValidateCeiling(count, kMaxJobReplicas, replica.PathOf("replicas"), errors);
    replicas += std::clamp<int64_t>(count, 0, kMaxJobReplicas);
    if (replica.String("restartPolicy") == "Always") {
      errors.Add(replica.PathOf("restartPolicy"), "Always is not for training");
    }
    if (!template_owner) {
      template_owner = replica;
    } else if (replica.Raw("template") != template_owner->Raw("template")) {
      errors.Add(replica.PathOf("template"), "must equal " + template_owner->PathOf("template") +
                                                 ": strata runs one template on every node");
    }
  }
  if (replicas < 1 && errors.empty()) {
    errors.Add(replica_specs.path(), "needs a Master or a Worker with at least one replica");
  }
  if (errors.empty() && replicas > kMaxJobReplicas) {
    errors.Add(replica_specs.path(), "the replicas make " + std::to_string(replicas) +
                                         " pods, over the limit of " +
                                         std::to_string(kMaxJobReplicas) + " for one gang");
  }
  if (!errors.empty() || !template_owner) return;

  FieldView pod_spec = template_owner->Object("template").Object("spec");
  RejectPodLevelFields(pod_spec, errors);
  KubeContainer container = FromSingleContainer(pod_spec, WorkloadClass::kTraining, errors);
  JobSpec& s = job.spec;
  s.replicas = replicas;
  s.resources = container.resources;
  s.template_ = std::move(container.process);
  s.tolerations = DecodeTolerations(pod_spec, "tolerations");
  s.topology = TemplateTopology(template_owner->Object("template"), errors);
  FieldView elastic = spec.Object("elasticPolicy");
  std::optional<ProcPerNodeSetting> nproc_setting = ReadProcPerNode(spec, "nprocPerNode", errors);
  int64_t nproc = nproc_setting ? nproc_setting->Resolve(s.resources) : 0;
  int64_t elastic_nproc = elastic.Integer("nProcPerNode", 0);
  if (nproc != 0 && elastic_nproc != 0 && nproc != elastic_nproc) {
    errors.Add(elastic.PathOf("nProcPerNode"), "contradicts spec.nprocPerNode");
  }
  s.proc_per_node = nproc != 0 ? nproc : (elastic_nproc != 0 ? elastic_nproc : 1);
  FieldView run = spec.Object("runPolicy");
  s.max_restarts = elastic.Integer("maxRestarts", run.Integer("backoffLimit", 0));
  s.clean_pod_policy = run.String("cleanPodPolicy", "None");
  s.runtime_limit = ActiveDeadline(run, errors);
  FieldView scheduling = run.Object("schedulingPolicy");
  if (scheduling.Has("minAvailable") && scheduling.Integer("minAvailable", 0) != replicas) {
    errors.Add(scheduling.PathOf("minAvailable"),
               "strata places the whole job: must equal the total replicas (" +
                   std::to_string(replicas) + ") or be left out");
  }
  if (scheduling.Has("queue")) {
    if (!s.queue.empty() && s.queue != scheduling.String("queue")) {
      errors.Add(scheduling.PathOf("queue"), "contradicts the kueue.x-k8s.io/queue-name label");
    }
    s.queue = scheduling.String("queue");
  }
  RequireQueueToSuspend(run, "PyTorchJob", s.queue, errors);
  if (scheduling.Has("priorityClass")) {
    s.priority = PriorityForClass(scheduling.String("priorityClass"),
                                  scheduling.PathOf("priorityClass"), errors)
                     .value_or(0);
  }
  out.objects.push_back(std::move(job));
}

}  // namespace strata::api
