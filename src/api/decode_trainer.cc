// Kubeflow Trainer (trainer.kubeflow.org/v1alpha1): a TrainJob becomes a native Job whose
// defaults come from the TrainingRuntime or ClusterTrainingRuntime its runtimeRef names. A
// runtime adds no object: its mlPolicy and the pod template of its trainer step are read into a
// TrainingRuntimeLink, and manifest.cc resolves each TrainJob against the runtime among the same
// manifests (or the built-in torch-distributed) with ResolveTrainJob.
#include <algorithm>

#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/job_roles.h"
#include "api/kube_common.h"
#include "api/native_schema.h"

namespace strata::api {
namespace {

using T = FieldType;

// The label Kubeflow Trainer puts on a runtime's replicated jobs to say which step each is.
constexpr std::string_view kAncestorStepLabel = "trainer.kubeflow.org/trainjob-ancestor-step";
// The replicated job Kubeflow Trainer treats as the trainer when no label says otherwise.
constexpr std::string_view kTrainerStepName = "node";
// The manager Kubeflow Trainer defaults spec.managedBy to: its own controller, which strata is.
constexpr std::string_view kTrainJobController = "trainer.kubeflow.org/trainjob-controller";

// ---- TrainJob ----------------------------------------------------------------------------

const TypeSchema* RuntimeRefSchema() {
  static const TypeSchema s{
      "RuntimeRef",
      "The runtime whose defaults the job uses.",
      {{"name",
        T::kString,
        "A TrainingRuntime or ClusterTrainingRuntime among the same manifests, or the built-in "
        "ClusterTrainingRuntime torch-distributed.",
        nullptr,
        {},
        true},
       {"kind",
        T::kEnum,
        "ClusterTrainingRuntime (default) or TrainingRuntime (of the job's namespace).",
        nullptr,
        {"ClusterTrainingRuntime", "TrainingRuntime"}},
       {"apiGroup", T::kEnum, "trainer.kubeflow.org.", nullptr, {"trainer.kubeflow.org"}}}};
  return &s;
}

const TypeSchema* TrainerSchema() {
  static const TypeSchema s{
      "Trainer",
      "The training processes; each field given overrides the runtime's.",
      {{"image", T::kString, "Container image, used by the Kubernetes mode."},
       {"command", T::kStringList,
        "The program and its first arguments (required here or in the runtime's template)."},
       {"args", T::kStringList, "More arguments."},
       {"env", T::kObjectList, "Environment variables, merged by name into the runtime's.",
        EnvVarSchema},
       {"numNodes", T::kNonNegativeInteger,
        "Nodes (pods) of the job (default: the runtime's mlPolicy.numNodes, else 1)."},
       {"resourcesPerNode", T::kObject, "What each node's pod needs (replaces the runtime's).",
        KubeResourceRequirementsSchema},
       {"numProcPerNode", T::kIntOrString,
        "Processes per node: a number, \"auto\", \"gpu\" or \"cpu\" (default: the runtime's "
        "mlPolicy.torch.numProcPerNode, else \"auto\")."}}};
  return &s;
}

const TypeSchema* TrainJobSpecSchema() {
  static const TypeSchema s{
      "TrainJobSpec",
      "A Kubeflow Trainer job.",
      {{"runtimeRef", T::kObject, "The runtime to use.", RuntimeRefSchema, {}, true},
       {"trainer", T::kObject, "The training processes.", TrainerSchema},
       {"suspend", T::kBool,
        "true: wait for the queue's admission (Kueue's convention); needs the "
        "kueue.x-k8s.io/queue-name label."},
       {"activeDeadlineSeconds", T::kNonNegativeInteger, "Becomes the job's runtimeLimit."},
       {"initializer", T::kUnsupported, "download data and models in the command"},
       {"labels", T::kUnsupported, "put labels on the TrainJob's metadata"},
       {"annotations", T::kUnsupported, "put annotations on the TrainJob's metadata"},
       {"podSpecOverrides", T::kUnsupported, "strata runs one template per job"},
       {"podTemplateOverrides", T::kUnsupported, "strata runs one template per job"},
       {"runtimePatches", T::kUnsupported, "strata runs the runtime's template as it is"},
       {"managedBy", T::kString,
        "trainer.kubeflow.org/trainjob-controller (Kubeflow's default), whose part strata "
        "plays; no other manager."}}};
  return &s;
}

// ---- TrainingRuntime and ClusterTrainingRuntime --------------------------------------------

const TypeSchema* TorchElasticPolicySchema() {
  static const TypeSchema s{
      "TorchElasticPolicy",
      "torchrun's elastic settings; strata's gangs have a fixed size.",
      {{"maxRestarts", T::kNonNegativeInteger, "Whole-group restarts: the job's maxRestarts."},
       {"minNodes", T::kUnsupported, "strata's gangs have a fixed size"},
       {"maxNodes", T::kUnsupported, "strata's gangs have a fixed size"},
       {"metrics", T::kUnsupported, "strata's gangs have a fixed size"}}};
  return &s;
}

const TypeSchema* TorchPolicySchema() {
  static const TypeSchema s{
      "TorchMLPolicySource",
      "The PyTorch runtime's settings.",
      {{"numProcPerNode", T::kIntOrString,
        "Processes per node: a number, \"auto\" (default), \"gpu\" or \"cpu\"."},
       {"elasticPolicy", T::kObject, "torchrun's elastic settings.", TorchElasticPolicySchema}}};
  return &s;
}

const TypeSchema* MLPolicySchema() {
  static const TypeSchema s{
      "MLPolicy",
      "The runtime's training parameters.",
      {{"numNodes", T::kNonNegativeInteger, "Nodes (pods) of a job (default 1)."},
       {"torch", T::kObject, "The PyTorch runtime's settings.", TorchPolicySchema},
       {"mpi", T::kUnsupported, "strata starts torch-style process groups, not MPI launchers"},
       {"flux", T::kUnsupported, "strata starts torch-style process groups, not Flux"}}};
  return &s;
}

const TypeSchema* CoschedulingPolicySchema() {
  static const TypeSchema s{
      "CoschedulingPodGroupPolicySource",
      "Gang scheduling: strata places every job's pods as one gang.",
      {{"scheduleTimeoutSeconds", T::kIgnored,
        "strata binds a gang only once all of it fits, so nothing waits for its peers"}}};
  return &s;
}

const TypeSchema* VolcanoPolicySchema() {
  static const TypeSchema s{
      "VolcanoPodGroupPolicySource",
      "Gang scheduling: strata places every job's pods as one gang.",
      {{"networkTopology", T::kUnsupported,
        "ask for a topology with Kueue's podset-required-topology annotation on the pod "
        "template"}}};
  return &s;
}

const TypeSchema* PodGroupPolicySchema() {
  static const TypeSchema s{
      "PodGroupPolicy",
      "Gang scheduling, which strata always does.",
      {{"coscheduling", T::kObject, "The scheduler-plugins gang: strata's own.",
        CoschedulingPolicySchema},
       {"volcano", T::kObject, "Volcano's gang: strata's own.", VolcanoPolicySchema}}};
  return &s;
}

const TypeSchema* StepJobSpecSchema() {
  static const TypeSchema s{
      "JobSpec",
      "The Job of one step; its pods are the job's nodes.",
      {{"template", T::kObject, "The pod template.", KubePodTemplateSchema, {}, true},
       {"parallelism", T::kUnsupported,
        "the nodes come from mlPolicy.numNodes or the TrainJob's trainer.numNodes"},
       {"completions", T::kUnsupported,
        "the nodes come from mlPolicy.numNodes or the TrainJob's trainer.numNodes"},
       {"backoffLimit", T::kUnsupported,
        "strata restarts the whole group: set the JobSet's failurePolicy.maxRestarts"},
       {"activeDeadlineSeconds", T::kUnsupported, "set the TrainJob's spec.activeDeadlineSeconds"},
       {"ttlSecondsAfterFinished", T::kUnsupported, "strata keeps finished jobs until deleted"}}};
  return &s;
}

const TypeSchema* StepJobMetadataSchema() {
  static const TypeSchema s{
      "JobTemplateMetadata",
      "Labels and annotations of a step's Job.",
      {{"labels", T::kStringMap,
        "trainer.kubeflow.org/trainjob-ancestor-step names the step; other labels are ignored, "
        "with a warning."},
       {"annotations", T::kIgnored, "strata's jobs do not carry a runtime step's annotations"}}};
  return &s;
}

const TypeSchema* StepJobTemplateSchema() {
  static const TypeSchema s{
      "JobTemplateSpec",
      "The Job of one step.",
      {{"metadata", T::kObject, "Labels and annotations.", StepJobMetadataSchema},
       {"spec", T::kObject, "The Job's spec.", StepJobSpecSchema, {}, true}}};
  return &s;
}

const TypeSchema* StepDependsOnSchema() {
  static const TypeSchema s{"DependsOn",
                            "A step that must get this far first.",
                            {{"name", T::kString, "Another step.", nullptr, {}, true},
                             {"status",
                              T::kEnum,
                              "Ready (its pods run) or Complete (they succeeded).",
                              nullptr,
                              {"Ready", "Complete"},
                              true}}};
  return &s;
}

const TypeSchema* ReplicatedJobSchema() {
  static const TypeSchema s{
      "ReplicatedJob",
      "One step of the runtime: the trainer, or an initializer that runs before it as a role of "
      "the job.",
      {{"name",
        T::kString,
        "The step's name; \"node\" is the trainer unless a label names another step.",
        nullptr,
        {},
        true},
       {"replicas", T::kNonNegativeInteger, "Must be 1: a TrainJob's nodes come from numNodes."},
       {"template", T::kObject, "The step's Job.", StepJobTemplateSchema, {}, true},
       {"dependsOn", T::kObjectList,
        "Steps whose pods must be Ready or Complete before this step's start.",
        StepDependsOnSchema},
       {"groupName", T::kUnsupported, "strata names no groups of steps"}}};
  return &s;
}

const TypeSchema* JobSetFailurePolicySchema() {
  static const TypeSchema s{
      "FailurePolicy",
      "How the job restarts after a failure.",
      {{"maxRestarts", T::kNonNegativeInteger, "Whole-group restarts: the job's maxRestarts."},
       {"restartStrategy",
        T::kEnum,
        "Recreate: strata recreates the whole group.",
        nullptr,
        {"Recreate"}},
       {"rules", T::kUnsupported, "strata restarts the whole group on any failure"}}};
  return &s;
}

const TypeSchema* RuntimeJobSetSpecSchema() {
  static const TypeSchema s{
      "JobSetSpec",
      "The runtime's steps.",
      {{"replicatedJobs",
        T::kObjectList,
        "The steps: the trainer, and initializers run as roles before it.",
        ReplicatedJobSchema,
        {},
        true},
       {"failurePolicy", T::kObject, "How the job restarts after a failure.",
        JobSetFailurePolicySchema},
       {"network", T::kIgnored,
        "strata gives every pod MASTER_ADDR and MASTER_PORT; processes use the host's network"},
       {"successPolicy", T::kUnsupported, "a strata job succeeds when every pod succeeds"},
       {"startupPolicy", T::kUnsupported, "strata starts a job's pods together"},
       {"coordinator", T::kUnsupported, "strata gives every pod MASTER_ADDR"},
       {"suspend", T::kUnsupported, "suspend the TrainJob (spec.suspend) in a queue"},
       {"managedBy", T::kUnsupported, "strata manages every job it admits"},
       {"ttlSecondsAfterFinished", T::kUnsupported, "strata keeps finished jobs until deleted"}}};
  return &s;
}

const TypeSchema* RuntimeTemplateSchema() {
  static const TypeSchema s{
      "JobSetTemplateSpec",
      "The JobSet a TrainJob runs.",
      {{"metadata", T::kIgnored, "strata's jobs do not carry a runtime JobSet's labels"},
       {"spec", T::kObject, "The runtime's steps.", RuntimeJobSetSpecSchema}}};
  return &s;
}

const TypeSchema* TrainingRuntimeSpecSchema() {
  static const TypeSchema s{
      "TrainingRuntimeSpec",
      "Defaults of the TrainJobs that name the runtime.",
      {{"mlPolicy", T::kObject, "Training parameters.", MLPolicySchema},
       {"podGroupPolicy", T::kObject, "Gang scheduling, which strata always does.",
        PodGroupPolicySchema},
       {"template", T::kObject, "The JobSet a TrainJob runs.", RuntimeTemplateSchema}}};
  return &s;
}

// Reads the one container of the trainer step's pod template into `defaults`; its command may
// be left to the TrainJob.
void DecodeTrainerStep(const FieldView& step, JobSpec& defaults, FieldErrors& errors) {
  if (step.Integer("replicas", 1) != 1) {
    errors.Add(step.PathOf("replicas"),
               "must be 1: a TrainJob's nodes come from numNodes (mlPolicy.numNodes or the "
               "TrainJob's trainer.numNodes)");
  }
  FieldView pod_template = step.Object("template").Object("spec").Object("template");
  FieldView pod_spec = pod_template.Object("spec");
  if (pod_spec.String("restartPolicy") == "Always") {
    errors.Add(pod_spec.PathOf("restartPolicy"), "Always is not for training");
  }
  for (const char* field : {"nodeName", "priority"}) {
    if (pod_spec.Has(field)) {
      errors.Add(pod_spec.PathOf(field), "set per job: strata places the job's pods together");
    }
  }
  KubeContainer container =
      FromSingleContainer(pod_spec, WorkloadClass::kTraining, errors, /*command_required=*/false,
                          /*node_selector_honoured=*/true);
  defaults.template_ = std::move(container.process);
  defaults.node_selector = std::move(container.node_selector);
  defaults.resources = container.resources;
  defaults.tolerations = DecodeTolerations(pod_spec, "tolerations");
  defaults.topology = TemplateTopology(pod_template, errors);
  if (pod_spec.Has("priorityClassName")) {
    defaults.priority = PriorityForClass(pod_spec.String("priorityClassName"),
                                         pod_spec.PathOf("priorityClassName"), errors)
                            .value_or(0);
  }
}

// A step other than the trainer (a dataset or model initializer): a role of one pod, whose
// container must give its command (strata cannot read an image's entrypoint).
JobRole DecodeInitializerStep(const FieldView& step, FieldErrors& errors) {
  if (step.Integer("replicas", 1) != 1) {
    errors.Add(step.PathOf("replicas"), "must be 1: an initializer step runs one pod");
  }
  FieldView pod_template = step.Object("template").Object("spec").Object("template");
  JobSpec decoded;
  DecodeGangPodTemplate(pod_template, decoded, errors);
  if (pod_template.Object("spec").String("restartPolicy") == "Always") {
    errors.Add(pod_template.Object("spec").PathOf("restartPolicy"),
               "Always is not for an initializer: it must complete");
  }
  if (!decoded.tolerations.empty() || !decoded.topology.level.empty() || decoded.priority != 0) {
    errors.Add(pod_template.PathOf("spec"),
               "tolerations, topology and priority are the trainer step's: strata places the "
               "job's steps as one gang");
  }
  return JobRole{.name = step.String("name"),
                 .resources = decoded.resources,
                 .template_ = decoded.template_,
                 .node_selector = decoded.node_selector};
}

// The step a replicated job is, by its ancestor-step label, else by its name.
std::string StepOf(const FieldView& replicated_job, FieldErrors& errors) {
  FieldView metadata = replicated_job.Object("template").Object("metadata");
  std::string step;
  for (const auto& [key, value] : metadata.StringMap("labels")) {
    if (key == kAncestorStepLabel) {
      step = value;
    } else {
      errors.Warn(KeyPath(metadata.PathOf("labels"), key),
                  "ignored: strata's jobs do not carry a runtime step's labels");
    }
  }
  if (!step.empty()) return step;
  return replicated_job.String("name") == kTrainerStepName ? "trainer" : "";
}

void DecodeRuntime(const FieldView& doc, std::string_view kind, bool namespaced,
                   DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  TrainingRuntimeLink link;
  link.kind = kind;
  ObjectMeta metadata = DecodeMetadata(doc.Object("metadata"), namespaced, false, errors);
  link.namespace_name = namespaced ? metadata.namespace_name : "";
  link.name = metadata.name;
  FieldView spec = doc.Object("spec");
  FieldView ml_policy = spec.Object("mlPolicy");
  JobSpec& defaults = link.defaults;
  defaults.replicas = ml_policy.Integer("numNodes", 1);
  if (defaults.replicas < 1) errors.Add(ml_policy.PathOf("numNodes"), "must be at least 1");
  ValidateCeiling(defaults.replicas, kMaxJobReplicas, ml_policy.PathOf("numNodes"), errors);
  FieldView torch = ml_policy.Object("torch");
  if (std::optional<ProcPerNodeSetting> nproc = ReadProcPerNode(torch, "numProcPerNode", errors)) {
    link.proc_per_node = *nproc;
  }
  FieldView jobset = spec.Object("template").Object("spec");
  FieldView elastic = torch.Object("elasticPolicy");
  FieldView failure = jobset.Object("failurePolicy");
  if (elastic.Has("maxRestarts") && failure.Has("maxRestarts") &&
      elastic.Integer("maxRestarts", 0) != failure.Integer("maxRestarts", 0)) {
    errors.Add(failure.PathOf("maxRestarts"), "contradicts " + elastic.PathOf("maxRestarts"));
  }
  defaults.max_restarts = elastic.Integer("maxRestarts", failure.Integer("maxRestarts", 0));

  std::optional<FieldView> trainer_step;
  for (const FieldView& replicated_job : jobset.ObjectList("replicatedJobs")) {
    std::string step = StepOf(replicated_job, errors);
    std::string name = replicated_job.String("name");
    std::vector<RoleDependency> depends_on;
    for (const FieldView& d : replicated_job.ObjectList("dependsOn")) {
      depends_on.push_back({d.String("name"), d.String("status")});
    }
    if (step != "trainer") {
      link.initializers.push_back(DecodeInitializerStep(replicated_job, errors));
      link.initializers.back().depends_on = std::move(depends_on);
    } else if (trainer_step) {
      errors.Add(replicated_job.PathOf("name"),
                 Quoted(name) + ": a second trainer step; strata runs one per job");
    } else {
      trainer_step = replicated_job;
      link.trainer_step = name;
      link.trainer_depends_on = std::move(depends_on);
    }
  }
  if (!trainer_step) {
    errors.Add(jobset.PathOf("replicatedJobs"),
               "needs a trainer step: the replicated job named \"node\" or labelled "
               "trainer.kubeflow.org/trainjob-ancestor-step: trainer");
  }
  if (trainer_step) DecodeTrainerStep(*trainer_step, defaults, errors);
  out.training_runtime = std::move(link);
}

}  // namespace

const TypeSchema* TrainJobSchema() {
  static const TypeSchema s = CompatDocument("TrainJob", "trainer.kubeflow.org/v1alpha1",
                                             "A Kubeflow Trainer job.", TrainJobSpecSchema);
  return &s;
}

const TypeSchema* TrainingRuntimeSchema() {
  static const TypeSchema s = CompatDocument(
      "TrainingRuntime", "trainer.kubeflow.org/v1alpha1",
      "Defaults for the TrainJobs of its namespace that name it.", TrainingRuntimeSpecSchema);
  return &s;
}

const TypeSchema* ClusterTrainingRuntimeSchema() {
  static const TypeSchema s = CompatDocument(
      "ClusterTrainingRuntime", "trainer.kubeflow.org/v1alpha1",
      "Defaults for the TrainJobs of any namespace that name it.", TrainingRuntimeSpecSchema);
  return &s;
}

void DecodeTrainingRuntime(const FieldView& doc, DecodedDocument& out) {
  DecodeRuntime(doc, "TrainingRuntime", /*namespaced=*/true, out);
}

void DecodeClusterTrainingRuntime(const FieldView& doc, DecodedDocument& out) {
  DecodeRuntime(doc, "ClusterTrainingRuntime", /*namespaced=*/false, out);
}

const TrainingRuntimeLink& BuiltInTorchDistributed() {
  static const TrainingRuntimeLink kRuntime = [] {
    TrainingRuntimeLink r;
    r.kind = "ClusterTrainingRuntime";
    r.name = "torch-distributed";
    return r;
  }();
  return kRuntime;
}

void DecodeTrainJob(const FieldView& doc, DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  TrainJobLink link;
  Job& job = link.job;
  job.metadata = DecodeMetadata(doc.Object("metadata"), true, true, errors);
  job.spec.queue = TakeQueueLabel(job.metadata);
  FieldView spec = doc.Object("spec");
  FieldView runtime = spec.Object("runtimeRef");
  link.runtime_kind = runtime.String("kind", "ClusterTrainingRuntime");
  link.runtime_name = runtime.String("name");
  if (spec.Bool("suspend", false) && job.spec.queue.empty()) {
    errors.Add(spec.PathOf("suspend"),
               "strata holds a TrainJob back only in a queue: add the kueue.x-k8s.io/queue-name "
               "label, or leave suspend out");
  }
  if (spec.Has("managedBy") && spec.String("managedBy") != kTrainJobController) {
    errors.Add(spec.PathOf("managedBy"),
               "strata manages every TrainJob it admits: leave it out or "
               "give " +
                   std::string(kTrainJobController) + ", got " + Quoted(spec.String("managedBy")));
  }
  job.spec.runtime_limit = ActiveDeadline(spec, errors);
  FieldView trainer = spec.Object("trainer");
  if (trainer.Has("numNodes")) {
    link.num_nodes = trainer.Integer("numNodes", 1);
    if (*link.num_nodes < 1) errors.Add(trainer.PathOf("numNodes"), "must be at least 1");
    ValidateCeiling(*link.num_nodes, kMaxJobReplicas, trainer.PathOf("numNodes"), errors);
  }
  link.proc_per_node = ReadProcPerNode(trainer, "numProcPerNode", errors);
  if (trainer.Has("resourcesPerNode")) {
    link.resources = FromKubeResources(trainer.Object("resourcesPerNode"), errors);
  }
  link.image = trainer.String("image");
  link.command = trainer.StringList("command");
  if (trainer.Has("args")) link.args = trainer.StringList("args");
  link.env = DecodeEnv(trainer, "env", errors);
  ValidateEnv(link.env, WorkloadClass::kTraining, trainer.PathOf("env"), errors);
  out.train_job = std::move(link);
}

void ResolveTrainJob(const TrainJobLink& link, const TrainingRuntimeLink& runtime,
                     DecodedDocument& out) {
  Job job = link.job;
  JobSpec& s = job.spec;
  s = runtime.defaults;
  s.queue = link.job.spec.queue;
  s.runtime_limit = link.job.spec.runtime_limit;
  if (link.num_nodes) s.replicas = *link.num_nodes;
  if (link.resources) s.resources = *link.resources;
  if (!link.image.empty()) s.template_.image = link.image;
  if (!link.command.empty()) s.template_.command = link.command;
  if (link.args) s.template_.args = *link.args;
  for (const EnvVar& var : link.env) {
    auto same = std::find_if(s.template_.env.begin(), s.template_.env.end(),
                             [&](const EnvVar& e) { return e.name == var.name; });
    if (same != s.template_.env.end()) {
      *same = var;
    } else {
      s.template_.env.push_back(var);
    }
  }
  s.proc_per_node = link.proc_per_node.value_or(runtime.proc_per_node).Resolve(s.resources);
  if (s.template_.command.empty()) {
    out.errors.Add("spec.trainer.command",
                   "required: neither the TrainJob nor " + runtime.kind + " " +
                       Quoted(runtime.name) +
                       " gives a command, and strata cannot read an image's entrypoint");
    return;
  }
  if (!runtime.initializers.empty()) {
    // The trainer first (rank 0 hosts its rendezvous), then the initializers it waits for; the
    // trainer's success is the job's.
    JobRole trainer{.name = runtime.trainer_step,
                    .replicas = s.replicas,
                    .proc_per_node = s.proc_per_node,
                    .resources = s.resources,
                    .template_ = s.template_,
                    .node_selector = s.node_selector,
                    .depends_on = runtime.trainer_depends_on};
    s.roles = {std::move(trainer)};
    s.roles.insert(s.roles.end(), runtime.initializers.begin(), runtime.initializers.end());
    s.replicas = JobSpec{}.replicas;
    s.proc_per_node = JobSpec{}.proc_per_node;
    s.resources = {};
    s.template_ = {};
    s.node_selector = {};
    s.success_policy.roles = {runtime.trainer_step};
    ValidateJobRoles(s, {"spec.template.spec.replicatedJobs", "dependsOn", "name", "spec"},
                     out.errors);
    if (!out.errors.empty()) return;
  }
  out.objects.push_back(std::move(job));
}

}  // namespace strata::api
