// Kubeflow's training kinds: kubeflow.org/v1 PyTorchJob and trainer.kubeflow.org/v1alpha1
// TrainJob, both decoded into a native Job.
#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/kube_common.h"
#include "api/native_schema.h"

namespace strata::api {
namespace {

using T = FieldType;

constexpr int64_t kMaxDeadlineSeconds = 100000LL * 3600;

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
       {"suspend", T::kUnsupported, "strata has no suspended jobs"},
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
        "Processes per node: a number, \"gpu\" or \"auto\" (the GPUs per node, else 1)."}}};
  return &s;
}

const TypeSchema* RuntimeRefSchema() {
  static const TypeSchema s{
      "RuntimeRef",
      "The training runtime; strata provides torch-distributed.",
      {{"name", T::kString, "torch-distributed.", nullptr, {}, true},
       {"kind",
        T::kEnum,
        "ClusterTrainingRuntime (default) or TrainingRuntime.",
        nullptr,
        {"ClusterTrainingRuntime", "TrainingRuntime"}},
       {"apiGroup", T::kEnum, "trainer.kubeflow.org.", nullptr, {"trainer.kubeflow.org"}}}};
  return &s;
}

const TypeSchema* TrainerSchema() {
  static const TypeSchema s{
      "Trainer",
      "The training processes.",
      {{"image", T::kString, "Container image, used by the Kubernetes mode."},
       {"command", T::kStringList, "The program and its first arguments.", nullptr, {}, true},
       {"args", T::kStringList, "More arguments."},
       {"env", T::kObjectList, "Environment variables.", EnvVarSchema},
       {"numNodes", T::kNonNegativeInteger, "Nodes (pods) of the job (default 1)."},
       {"resourcesPerNode", T::kObject, "What each node's pod needs.",
        KubeResourceRequirementsSchema},
       {"numProcPerNode", T::kIntOrString,
        "Processes per node: a number, \"gpu\" or \"auto\" (default)."}}};
  return &s;
}

const TypeSchema* TrainJobSpecSchema() {
  static const TypeSchema s{
      "TrainJobSpec",
      "A Kubeflow Trainer job.",
      {{"runtimeRef", T::kObject, "The runtime to use.", RuntimeRefSchema, {}, true},
       {"trainer", T::kObject, "The training processes.", TrainerSchema, {}, true},
       {"initializer", T::kUnsupported, "download data and models in the command"},
       {"labels", T::kUnsupported, "put labels on the TrainJob's metadata"},
       {"annotations", T::kUnsupported, "put annotations on the TrainJob's metadata"},
       {"podSpecOverrides", T::kUnsupported, "strata runs one template per job"},
       {"suspend", T::kUnsupported, "strata has no suspended jobs"},
       {"managedBy", T::kUnsupported, "strata manages every job it admits"}}};
  return &s;
}

// Reads nprocPerNode ("4", 4, "gpu", "auto") given the whole GPUs per node.
int64_t ProcPerNode(const FieldView& parent, std::string_view field, int64_t gpus_per_node,
                    FieldErrors& errors) {
  const nlohmann::json& v = parent.Raw(field);
  if (v.is_null()) return 0;
  if (v.is_number_integer()) {
    if (v.get<int64_t>() < 1) errors.Add(parent.PathOf(field), "must be at least 1");
    return v.get<int64_t>();
  }
  std::string text = v.get<std::string>();
  if (text == "gpu" || text == "auto") return std::max<int64_t>(1, gpus_per_node);
  if (!text.empty() && text.size() < 7 &&
      text.find_first_not_of("0123456789") == std::string::npos && std::stoll(text) > 0) {
    return std::stoll(text);
  }
  errors.Add(parent.PathOf(field),
             "expected a positive number, \"gpu\" or \"auto\", got " + Quoted(text));
  return 0;
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

const TypeSchema* PyTorchJobSchema() {
  static const TypeSchema s = CompatDocument(
      "PyTorchJob", "kubeflow.org/v1", "A Kubeflow PyTorch distributed job.", PyTorchJobSpecSchema);
  return &s;
}

const TypeSchema* TrainJobSchema() {
  static const TypeSchema s = CompatDocument("TrainJob", "trainer.kubeflow.org/v1alpha1",
                                             "A Kubeflow Trainer job.", TrainJobSpecSchema);
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
    replicas += count;
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
  int64_t gpus = s.resources.gpu.milli() / 1000;
  FieldView elastic = spec.Object("elasticPolicy");
  int64_t nproc = ProcPerNode(spec, "nprocPerNode", gpus, errors);
  int64_t elastic_nproc = elastic.Integer("nProcPerNode", 0);
  if (nproc != 0 && elastic_nproc != 0 && nproc != elastic_nproc) {
    errors.Add(elastic.PathOf("nProcPerNode"), "contradicts spec.nprocPerNode");
  }
  s.proc_per_node = nproc != 0 ? nproc : (elastic_nproc != 0 ? elastic_nproc : 1);
  FieldView run = spec.Object("runPolicy");
  s.max_restarts = elastic.Integer("maxRestarts", run.Integer("backoffLimit", 0));
  s.clean_pod_policy = run.String("cleanPodPolicy", "None");
  int64_t deadline_seconds = run.Integer("activeDeadlineSeconds", 0);
  if (deadline_seconds > kMaxDeadlineSeconds) {
    errors.Add(run.PathOf("activeDeadlineSeconds"), "must be at most 100000 hours");
  } else {
    s.runtime_limit = std::chrono::seconds(deadline_seconds);
  }
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
  if (scheduling.Has("priorityClass")) {
    s.priority = PriorityForClass(scheduling.String("priorityClass"),
                                  scheduling.PathOf("priorityClass"), errors)
                     .value_or(0);
  }
  out.objects.push_back(std::move(job));
}

void DecodeTrainJob(const FieldView& doc, DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  Job job;
  job.metadata = DecodeMetadata(doc.Object("metadata"), true, true, errors);
  job.spec.queue = TakeQueueLabel(job.metadata);
  FieldView spec = doc.Object("spec");
  FieldView runtime = spec.Object("runtimeRef");
  if (runtime.String("name") != "torch-distributed") {
    errors.Add(runtime.PathOf("name"), "strata provides the torch-distributed runtime only, got " +
                                           Quoted(runtime.String("name")));
  }
  FieldView trainer = spec.Object("trainer");
  JobSpec& s = job.spec;
  s.replicas = trainer.Integer("numNodes", 1);
  if (s.replicas < 1) errors.Add(trainer.PathOf("numNodes"), "must be at least 1");
  s.resources = FromKubeResources(trainer.Object("resourcesPerNode"), errors);
  s.template_.image = trainer.String("image");
  s.template_.command = trainer.StringList("command");
  if (s.template_.command.empty()) errors.Add(trainer.PathOf("command"), "must name a program");
  s.template_.args = trainer.StringList("args");
  s.template_.env = DecodeEnv(trainer, "env");
  ValidateEnv(s.template_.env, WorkloadClass::kTraining, trainer.PathOf("env"), errors);
  int64_t gpus = s.resources.gpu.milli() / 1000;
  int64_t nproc = ProcPerNode(trainer, "numProcPerNode", gpus, errors);
  s.proc_per_node = nproc != 0 ? nproc : std::max<int64_t>(1, gpus);
  out.objects.push_back(std::move(job));
}

}  // namespace strata::api
