#include "api/native_schema.h"

#include <algorithm>

#include "api/decode_probe.h"
#include "api/validation.h"

namespace strata::api {

const TypeSchema* TopologySchema() {
  static const TypeSchema s{
      "TopologyConstraint",
      "Where the pods of a gang must or should land together.",
      {{"level", FieldType::kString,
        "A node label key naming a topology level (e.g. topology.strata.dev/rack), or \"nvlink\" "
        "for one NVLink island. Empty: no constraint."},
       {"mode",
        FieldType::kEnum,
        "Required (never split) or Preferred (split only when it must).",
        nullptr,
        {"Required", "Preferred"}}}};
  return &s;
}

namespace {

using T = FieldType;

constexpr std::string_view kQuantityDoc = "a Kubernetes quantity: \"8\", \"500m\", \"24Gi\"";

const TypeSchema* CheckpointSchema() {
  static const TypeSchema s{
      "Checkpoint",
      "Where a job writes checkpoints; the scheduler prices preemption by the time since the last.",
      {{"dir", T::kString,
        "Directory the job writes checkpoints to; exported as STRATA_CHECKPOINT_DIR."},
       {"interval", T::kDuration, "How often the job means to checkpoint (e.g. 30m)."}}};
  return &s;
}

const TypeSchema* TaintSchema() {
  static const TypeSchema s{"Taint",
                            "A node taint: pods that do not tolerate it are kept off the node.",
                            {{"key", T::kString, "The taint key.", nullptr, {}, true},
                             {"value", T::kString, "The taint value."},
                             {"effect",
                              T::kEnum,
                              "NoSchedule, PreferNoSchedule or NoExecute (default NoSchedule).",
                              nullptr,
                              {"NoSchedule", "PreferNoSchedule", "NoExecute"}}}};
  return &s;
}

const TypeSchema* MigInstanceSchema() {
  static const TypeSchema s{
      "MigInstance",
      "One MIG instance carved from a GPU.",
      {{"profile", T::kString, "The MIG profile, e.g. 1g.10gb.", nullptr, {}, true},
       {"uuid", T::kString, "The instance's UUID (MIG-...)."}}};
  return &s;
}

const TypeSchema* NodeGpuSchema() {
  static const TypeSchema s{
      "NodeGpu",
      "One GPU of a node, as its inventory reports it.",
      {{"index", T::kNonNegativeInteger, "The device index (CUDA_VISIBLE_DEVICES)."},
       {"uuid", T::kString, "The GPU's UUID (GPU-...)."},
       {"model", T::kString, "The GPU model, e.g. H100-80GB.", nullptr, {}, true},
       {"memory", T::kQuantity, "Total GPU memory, e.g. 80Gi."},
       {"nvlinkIsland", T::kNonNegativeInteger, "GPUs with the same island talk over NVLink."},
       {"migEnabled", T::kBool, "Whether MIG mode is on."},
       {"migInstances", T::kObjectList, "The MIG instances carved from this GPU.",
        MigInstanceSchema}}};
  return &s;
}

const TypeSchema* NodeConditionSchema() {
  static const TypeSchema s{
      "NodeCondition",
      "A node condition, e.g. Ready.",
      {{"type", T::kString, "The condition, e.g. Ready.", nullptr, {}, true},
       {"status", T::kEnum, "True, False or Unknown.", nullptr, {"True", "False", "Unknown"}},
       {"reason", T::kString, "One CamelCase word saying why."},
       {"message", T::kString, "A sentence for people."},
       {"lastHeartbeatTime", T::kTimestamp, "When the node last reported this condition."},
       {"lastTransitionTime", T::kTimestamp, "When the status last changed."}}};
  return &s;
}

const TypeSchema* NodeCapacitySchema() {
  static const TypeSchema s{
      "NodeCapacity",
      "What the node has in all.",
      {{"cpu", T::kQuantity, "CPU cores."},
       {"memory", T::kQuantity, "Memory."},
       {"nvidia.com/gpu", T::kQuantity,
        "Read-only, served: the whole GPUs of status.gpus, as Kubernetes' device plugin counts "
        "them, GPUs in MIG mode left out (ignored on write)."}}};
  return &s;
}

const TypeSchema* NodeSpecSchema() {
  static const TypeSchema s{
      "NodeSpec",
      "How the node may be used.",
      {{"taints", T::kObjectList, "Taints that keep intolerant pods off the node.", TaintSchema},
       {"unschedulable", T::kBool, "When true, no new pod is placed on the node (cordoned)."}}};
  return &s;
}

const TypeSchema* NodeStatusSchema() {
  static const TypeSchema s{
      "NodeStatus",
      "What the node agent reports.",
      {{"capacity", T::kObject, "CPU and memory in all.", NodeCapacitySchema},
       {"allocatable", T::kObject,
        "Read-only, served: what pods may use, the same as capacity (ignored on write).",
        NodeCapacitySchema},
       {"gpus", T::kObjectList, "The node's GPUs.", NodeGpuSchema},
       {"conditions", T::kObjectList, "Conditions, with heartbeats.", NodeConditionSchema}}};
  return &s;
}

const TypeSchema* ResourceQuotaSchema() {
  static const TypeSchema s{
      "ResourceQuota",
      "Quota for one resource of one flavor.",
      {{"name",
        T::kEnum,
        "cpu, memory, gpu (in GPUs; \"500m\" is half a GPU) or gpuMemory.",
        nullptr,
        {"cpu", "memory", "gpu", "gpuMemory"},
        true},
       {"nominal", T::kQuantity, "What the queue is guaranteed.", nullptr, {}, true},
       {"borrowingLimit", T::kQuantity,
        "How much more than nominal the queue may borrow from its cohort. Absent: no limit."},
       {"lendingLimit", T::kQuantity,
        "How much of its unused nominal quota the queue lends to its cohort. Absent: all of it."}}};
  return &s;
}

const TypeSchema* FlavorQuotaSchema() {
  static const TypeSchema s{
      "FlavorQuota",
      "The queue's quota in one ResourceFlavor.",
      {{"name", T::kString, "The ResourceFlavor's name.", nullptr, {}, true},
       {"resources", T::kObjectList, "Quota per resource.", ResourceQuotaSchema}}};
  return &s;
}

const TypeSchema* QueuePreemptionSchema() {
  static const TypeSchema s{
      "QueuePreemption",
      "Whom a workload of this queue may preempt when it cannot be placed otherwise.",
      {{"withinQueue",
        T::kEnum,
        "Never or LowerPriority: workloads of the same queue.",
        nullptr,
        {"Never", "LowerPriority"}},
       {"reclaimWithinCohort",
        T::kEnum,
        "Never, LowerPriority or Any: workloads of other queues of the cohort that borrow beyond "
        "their nominal quota.",
        nullptr,
        {"Never", "LowerPriority", "Any"}}}};
  return &s;
}

const TypeSchema* LocalQueueRefSchema() {
  static const TypeSchema s{
      "LocalQueueRef",
      "A namespaced name workloads may use for this queue (from a Kueue LocalQueue).",
      {{"namespace", T::kString, "The namespace the name is valid in.", nullptr, {}, true},
       {"name", T::kString, "The name workloads of that namespace use.", nullptr, {}, true}}};
  return &s;
}

const TypeSchema* QueueSpecSchema() {
  static const TypeSchema s{
      "QueueSpec",
      "The queue's quota and how it shares it.",
      {{"cohort", T::kString, "Queues of one cohort lend each other unused quota."},
       {"flavors", T::kObjectList, "Quota per ResourceFlavor.", FlavorQuotaSchema},
       {"weight", T::kQuantity, "Fair-share weight within the cohort (default 1)."},
       {"queueingStrategy",
        T::kEnum,
        "BestEffortFIFO (a workload that does not fit lets later ones try; default) or StrictFIFO.",
        nullptr,
        {"BestEffortFIFO", "StrictFIFO"}},
       {"preemption", T::kObject, "Whom this queue's workloads may preempt.",
        QueuePreemptionSchema},
       {"reclaimable", T::kBool,
        "Whether other queues may reclaim what this queue borrows (default true)."},
       {"localQueues", T::kObjectList, "Namespaced names workloads may use for this queue.",
        LocalQueueRefSchema},
       {"lendOnly", T::kBool,
        "The queue only holds quota its cohort's queues borrow and admits no workload (a Kueue "
        "Cohort's own quota; default false)."}}};
  return &s;
}

const TypeSchema* ResourceFlavorSpecSchema() {
  static const TypeSchema s{
      "ResourceFlavorSpec",
      "Which nodes belong to the flavor.",
      {{"nodeLabels", T::kStringMap, "Nodes carrying all of these labels are of this flavor."},
       {"tolerations", T::kObjectList, "Tolerations added to workloads admitted on this flavor.",
        TolerationSchema}}};
  return &s;
}

const TypeSchema* RoleDependencySchema() {
  static const TypeSchema s{
      "RoleDependency",
      "A role whose pods must get this far before this role's pods start.",
      {{"role", T::kString, "Another role of the job.", nullptr, {}, true},
       {"status",
        T::kEnum,
        "Ready (default): every pod of that role runs; Complete: every pod of it succeeded.",
        nullptr,
        {"Ready", "Complete"}}}};
  return &s;
}

const TypeSchema* JobRoleSchema() {
  static const TypeSchema s{
      "JobRole",
      "One pod template of the job and its pods. Ranks count across roles in order; the whole "
      "job is placed at once, and a role's pods start once the roles it dependsOn are there.",
      {{"name", T::kString, "The role's name, unique in the job.", nullptr, {}, true},
       {.name = "replicas",
        .type = T::kNonNegativeInteger,
        .doc = "Pods of this role (default 1).",
        .maximum = kMaxJobReplicas},
       {"procPerNode", T::kNonNegativeInteger,
        "Worker processes per pod of this role (default 1)."},
       {"resources", T::kObject, "What each pod of this role needs.", ResourceRequestSchema},
       {"nodeSelector", T::kStringMap, "Labels every node of this role's pods must carry."},
       {"template",
        T::kObject,
        "The processes each pod of this role runs.",
        ProcessTemplateSchema,
        {},
        true},
       {"dependsOn", T::kObjectList,
        "Roles that must be Ready or Complete before this role's pods start.",
        RoleDependencySchema}}};
  return &s;
}

const TypeSchema* JobSuccessPolicySchema() {
  static const TypeSchema s{
      "JobSuccessPolicy",
      "When the job succeeds; its other pods are then stopped. A role succeeds when each of "
      "its pods has.",
      {{"operator",
        T::kEnum,
        "All (default): when every target role has succeeded; Any: when one has.",
        nullptr,
        {"All", "Any"}},
       {"roles", T::kStringList,
        "The target roles (default: every role; a job without roles has one, \"worker\")."}}};
  return &s;
}

const TypeSchema* JobSpecSchema() {
  static const TypeSchema s{
      "JobSpec",
      "What the job runs and what it needs: one pod template (replicas, procPerNode, "
      "resources, nodeSelector, template) or several roles.",
      {{.name = "replicas",
        .type = T::kNonNegativeInteger,
        .doc = "Pods (nodes), placed all together or not at all (default 1). Not with roles.",
        .maximum = kMaxJobReplicas},
       {"procPerNode", T::kNonNegativeInteger,
        "Worker processes per pod, torchrun's nproc_per_node (default 1). When the command "
        "runs torchrun itself, strata starts that one launcher per pod and torchrun the "
        "workers. Not with roles."},
       {"resources", T::kObject, "What each pod needs. Not with roles.", ResourceRequestSchema},
       {"nodeSelector", T::kStringMap,
        "Labels every pod's node must carry. Not with roles (each role has its own)."},
       {"roles", T::kObjectList,
        "Several pod templates (a driver and workers, initializers and a trainer), instead of "
        "replicas, procPerNode, resources, nodeSelector and template.",
        JobRoleSchema},
       {"gpuSelector", T::kObject, "Which GPUs the job accepts.", GpuSelectorSchema},
       {"tolerations", T::kObjectList, "Node taints the job tolerates.", TolerationSchema},
       {"topology", T::kObject, "Where the pods must or should land together.", TopologySchema},
       {"maxRestarts", T::kNonNegativeInteger,
        "Whole-group restarts after a worker fails, before the job fails (default 0)."},
       {"checkpoint", T::kObject, "Where and how often the job checkpoints.", CheckpointSchema},
       {"priority", T::kInteger, "Higher runs first and may preempt lower (default 0)."},
       {"queue", T::kString, "The Queue (or LocalQueue name) that admits the job."},
       {"runtimeLimit", T::kDuration,
        "The job is stopped after running this long; also lets "
        "it backfill before a reservation."},
       {"template", T::kObject, "The processes each pod runs; required unless the job has roles.",
        ProcessTemplateSchema},
       {"cleanPodPolicy",
        T::kEnum,
        "Which pods to stop when the job ends: None, Running (default) or All.",
        nullptr,
        {"None", "Running", "All"}},
       {"successPolicy", T::kObject, "When the job succeeds (default: when every pod has).",
        JobSuccessPolicySchema}}};
  return &s;
}

const TypeSchema* PodOwnerSchema() {
  static const TypeSchema s{
      "PodOwner",
      "The workload the pod belongs to.",
      {{"kind", T::kEnum, "Job or Service.", nullptr, {"Job", "Service"}, true},
       {"name", T::kString, "The workload's name.", nullptr, {}, true},
       {"replica", T::kNonNegativeInteger, "Job: node rank. Service: replica index."},
       {"rank", T::kNonNegativeInteger, "Service: rank within the replica's group of pods."},
       {"uid", T::kString, "The workload's uid, served as the pod's controller reference."}}};
  return &s;
}

}  // namespace

const TypeSchema* AssignedGpuSchema() {
  static const TypeSchema s{
      "AssignedGpu",
      "A GPU, or a share of one, bound to the pod.",
      {{"index", T::kNonNegativeInteger, "The device index on the node."},
       {"uuid", T::kString, "The GPU's UUID."},
       {"share", T::kQuantity, "How much of the GPU, in GPUs (default 1)."},
       {"memory", T::kQuantity, "GPU memory reserved, for a fractional share."},
       {"migInstance", T::kString, "The MIG instance's UUID."}}};
  return &s;
}

namespace {

const TypeSchema* PodGangSchema() {
  static const TypeSchema s{
      "PodGang",
      "An all-or-nothing group of standalone pods.",
      {{"name", T::kString, "The group's name.", nullptr, {}, true},
       {"minMember",
        T::kNonNegativeInteger,
        "Pods that must be placed together.",
        nullptr,
        {},
        true},
       {"minResources", T::kQuantityMap, "Resources the group needs to start."}}};
  return &s;
}

const TypeSchema* PodSpecSchema() {
  static const TypeSchema s{
      "PodSpec",
      "What the pod runs and where.",
      {{"owner", T::kObject, "The workload the pod belongs to (absent: standalone).",
        PodOwnerSchema},
       {"queue", T::kString, "The Queue that admits a standalone pod."},
       {"priority", T::kInteger, "Scheduling priority (default 0)."},
       {"restartPolicy",
        T::kEnum,
        "Always (default), OnFailure or Never.",
        nullptr,
        {"Always", "OnFailure", "Never"}},
       {"nodeName", T::kString, "The node the pod is bound to."},
       {"resources", T::kObject, "What the pod needs.", ResourceRequestSchema},
       {"gpuSelector", T::kObject, "Which GPUs the pod accepts.", GpuSelectorSchema},
       {"nodeSelector", T::kStringMap, "Labels the pod's node must carry."},
       {"tolerations", T::kObjectList, "Node taints the pod tolerates.", TolerationSchema},
       {"template", T::kObject, "The processes the pod runs.", ProcessTemplateSchema, {}, true},
       {"assignedGpus", T::kObjectList, "GPUs bound to the pod.", AssignedGpuSchema},
       {"gang", T::kObject, "The all-or-nothing group the pod belongs to.", PodGangSchema}}};
  return &s;
}

const TypeSchema* PodStatusSchema() {
  static const TypeSchema s{
      "PodStatus",
      "What happened to the pod.",
      {{"phase",
        T::kEnum,
        "Pending, Running, Succeeded or Failed.",
        nullptr,
        {"Pending", "Running", "Succeeded", "Failed"}},
       {"exitCode", T::kInteger, "The exit code of the last run."},
       {"restartCount", T::kNonNegativeInteger, "How many times the processes restarted."},
       {"reason", T::kString, "One CamelCase word saying why."},
       {"message", T::kString, "A sentence for people."},
       {"podIP", T::kString,
        "The address the processes are reached at: the node's (set when they start)."}}};
  return &s;
}

const TypeSchema* TenantSpecSchema() {
  static const TypeSchema s{
      "TenantSpec",
      "The tenant's credentials and quota.",
      {{"apiKeys", T::kStringList, "Bearer tokens that identify the tenant at the gateway."},
       {"tokensPerMinute", T::kNonNegativeInteger, "Token quota per minute (0: unlimited)."},
       {"priorityClass",
        T::kEnum,
        "critical, standard (default) or sheddable: who waits first when over capacity.",
        nullptr,
        {"critical", "standard", "sheddable"}}}};
  return &s;
}

const TypeSchema* ObjectReferenceSchema() {
  static const TypeSchema s{"ObjectReference",
                            "The object an event is about.",
                            {{"kind", T::kString, "Its kind.", nullptr, {}, true},
                             {"name", T::kString, "Its name.", nullptr, {}, true},
                             {"namespace", T::kString, "Its namespace."},
                             {"uid", T::kString, "Its uid."}}};
  return &s;
}

std::vector<FieldSpec> DocumentHead() {
  return {{"apiVersion", T::kString, "strata.dev/v1alpha1", nullptr, {}, true},
          {"kind", T::kString, "The kind of the object.", nullptr, {}, true},
          {"metadata",
           T::kObject,
           "Name, namespace, labels and bookkeeping.",
           ObjectMetaSchema,
           {},
           true}};
}

TypeSchema Document(std::string_view name, std::string_view doc, const TypeSchema* (*spec)(),
                    const TypeSchema* (*status)(), bool spec_required = false) {
  TypeSchema s{name, doc, DocumentHead()};
  if (spec != nullptr) {
    // A spec with required fields is itself required: its absence must not slip past them.
    const TypeSchema* spec_schema = spec();
    bool required =
        spec_required || std::any_of(spec_schema->fields.begin(), spec_schema->fields.end(),
                                     [](const FieldSpec& f) { return f.required; });
    s.fields.push_back({"spec", T::kObject, spec_schema->doc, spec, {}, required});
  }
  if (status != nullptr) s.fields.push_back({"status", T::kObject, status()->doc, status});
  return s;
}

const TypeSchema* ManagedFieldsEntrySchema() {
  static const TypeSchema s{
      "ManagedFieldsEntry",
      "The fields one manager set, by one operation.",
      {{"manager", T::kString, "Who set them: a request's fieldManager (kubectl, strata...)."},
       {"operation",
        T::kEnum,
        "Apply (server-side apply) or Update (any other write).",
        nullptr,
        {"Apply", "Update"}},
       {"apiVersion", T::kString, "The version of the object the fields are named in."},
       {"time", T::kTimestamp, "When the manager last changed them."},
       {"fieldsType", T::kEnum, "The form of fieldsV1.", nullptr, {"FieldsV1"}},
       {"fieldsV1", T::kFreeForm,
        "The set of fields, as Kubernetes writes it: f:NAME for a field, k:{KEY} for an item of "
        "a list keyed by KEY, \".\" for the item itself."},
       {"subresource", T::kString, "The subresource written (\"status\"), empty for the object."}}};
  return &s;
}

}  // namespace

const TypeSchema* ObjectMetaSchema() {
  static const TypeSchema s{
      "ObjectMeta",
      "Identity and bookkeeping common to every object.",
      {{"name", T::kString,
        "The object's name, unique per kind and namespace (DNS-1123); required unless "
        "generateName is given."},
       {"generateName", T::kString,
        "Without a name: a prefix to which five random characters are added to make one, as "
        "Kubernetes does; every apply then creates a new object."},
       {"namespace", T::kString, "The namespace of a namespaced kind (default \"default\")."},
       {"labels", T::kStringMap, "Key/value pairs to select and group objects by."},
       {"annotations", T::kStringMap, "Key/value pairs for tools; not used to select."},
       {"uid", T::kString, "Set by the server: unique for the object's lifetime."},
       {"resourceVersion", T::kString, "Set by the server: changes on every write."},
       {"creationTimestamp", T::kTimestamp, "Set by the server: when the object was created."},
       {"generation", T::kIgnored, "set by the server"},
       {"managedFields", T::kObjectList,
        "Set by the server: which fields each manager set (server-side apply), as Kubernetes "
        "keeps them. A write that gives them replaces them.",
        ManagedFieldsEntrySchema},
       {"selfLink", T::kIgnored, "set by the server"},
       {"deletionTimestamp", T::kIgnored, "set by the server"},
       {"deletionGracePeriodSeconds", T::kIgnored, "set by the server"},
       {"ownerReferences", T::kIgnored, "set by the controllers that own an object"},
       {"finalizers", T::kIgnored, "strata's controllers add the finalizers they need"}}};
  return &s;
}

namespace {

const TypeSchema* ResourceLimitsSchema() {
  static const TypeSchema s{
      "ResourceLimits",
      "The most a pod's processes may use, at least what is reserved.",
      {{"cpu", T::kQuantity, kQuantityDoc}, {"memory", T::kQuantity, kQuantityDoc}}};
  return &s;
}

}  // namespace

const TypeSchema* ResourceRequestSchema() {
  static const TypeSchema s{
      "ResourceRequest",
      "What one pod needs. GPUs count in GPUs with milli precision: \"8\" is eight whole GPUs, "
      "\"500m\" half of one.",
      {{"cpu", T::kQuantity, kQuantityDoc},
       {"memory", T::kQuantity, kQuantityDoc},
       {"gpu", T::kQuantity, "Whole GPUs (\"8\") or a share of one (\"250m\")."},
       {"gpuMemory", T::kQuantity, "GPU memory per GPU; with a share, bounds it by memory."},
       {"migProfile", T::kString, "One MIG instance of this profile (e.g. 1g.10gb)."},
       {"limits", T::kObject,
        "What the pod's processes may use beyond the reservation (Kubernetes' limits over its "
        "requests), enforced where the node has cgroup v2; default: the reservation.",
        ResourceLimitsSchema}}};
  return &s;
}

const TypeSchema* GpuSelectorSchema() {
  static const TypeSchema s{"GpuSelector",
                            "Which GPUs a workload accepts.",
                            {{"models", T::kStringList, "Acceptable GPU models (empty: any)."},
                             {"minMemory", T::kQuantity, "Least GPU memory per GPU."}}};
  return &s;
}

const TypeSchema* EnvVarSchema() {
  static const TypeSchema s{
      "EnvVar",
      "An environment variable.",
      {{"name", T::kString, "The variable's name.", nullptr, {}, true},
       {"value", T::kString, "Its value."},
       {"valueFrom", T::kObject, "Where the value is read when the processes start.",
        EnvVarSourceSchema}}};
  return &s;
}

const TypeSchema* ProcessTemplateSchema() {
  static const TypeSchema s{
      "ProcessTemplate",
      "The processes to run.",
      {{"image", T::kString, "Container image, used by the Kubernetes mode."},
       {"command", T::kStringList, "The program and its first arguments.", nullptr, {}, true},
       {"args", T::kStringList, "More arguments."},
       {"env", T::kObjectList, "Environment variables (names strata sets are reserved).",
        EnvVarSchema},
       {"envFrom", T::kObjectList, "ConfigMaps and Secrets whose keys become variables.",
        EnvFromSourceSchema},
       {"workingDir", T::kString, "Working directory."},
       {"securityContext", T::kObject, "Who the processes run as.", SecurityContextSchema},
       {"livenessProbe", T::kObject, "Kills (and so restarts) the pod when it fails.", ProbeSchema},
       {"readinessProbe", T::kObject, "Decides whether the pod is Ready (gets traffic).",
        ProbeSchema},
       {"startupProbe", T::kObject, "Holds the other probes back until it passes.", ProbeSchema}}};
  return &s;
}

const TypeSchema* SecurityContextSchema() {
  static const TypeSchema s{
      "SecurityContext",
      "Who a pod's processes run as. A node agent running as root runs pods as an unprivileged "
      "user (65534, nobody) unless they name one; root only when the pod asks for it and the "
      "node was started with --allow-root-pods.",
      {{"runAsUser", T::kInteger, "The user id (0: root)."},
       {"runAsGroup", T::kInteger, "The group id (default 65534, nogroup)."},
       {"runAsNonRoot", T::kBool,
        "true: never root; false (with no runAsUser): asks to run as root."}}};
  return &s;
}

const TypeSchema* TolerationSchema() {
  static const TypeSchema s{
      "Toleration",
      "A node taint the workload tolerates.",
      {{"key", T::kString, "The taint key (empty with Exists: every taint)."},
       {"operator", T::kEnum, "Equal (default) or Exists.", nullptr, {"Equal", "Exists"}},
       {"value", T::kString, "The taint value, for Equal."},
       {"effect",
        T::kEnum,
        "The taint effect to tolerate (empty: all).",
        nullptr,
        {"NoSchedule", "PreferNoSchedule", "NoExecute"}},
       {"tolerationSeconds", T::kUnsupported, "strata does not evict on NoExecute taints"}}};
  return &s;
}

const TypeSchema* NodeDocumentSchema() {
  static const TypeSchema s = Document("Node", "A machine that runs pods. Cluster-scoped.",
                                       NodeSpecSchema, NodeStatusSchema);
  return &s;
}

const TypeSchema* QueueDocumentSchema() {
  static const TypeSchema s =
      Document("Queue", "A quota queue that admits workloads. Cluster-scoped.", QueueSpecSchema,
               QueueStatusSchema);
  return &s;
}

const TypeSchema* ResourceFlavorDocumentSchema() {
  static const TypeSchema s = Document(
      "ResourceFlavor", "A class of nodes (a GPU model) quota is given in. Cluster-scoped.",
      ResourceFlavorSpecSchema, nullptr);
  return &s;
}

const TypeSchema* JobDocumentSchema() {
  static const TypeSchema s = Document(
      "Job",
      "A distributed training job: replicas x procPerNode workers with torchrun's contract, or "
      "several roles of their own templates.",
      JobSpecSchema, JobStatusSchema, /*spec_required=*/true);  // a template or roles
  return &s;
}

const TypeSchema* ServiceDocumentSchema() {
  static const TypeSchema s =
      Document("Service", "An inference service: engine replicas behind the gateway.",
               ServiceSpecSchema, ServiceStatusSchema);
  return &s;
}

const TypeSchema* PodDocumentSchema() {
  static const TypeSchema s = Document("Pod", "The unit placed on one node; runs processes there.",
                                       PodSpecSchema, PodStatusSchema);
  return &s;
}

const TypeSchema* TenantDocumentSchema() {
  static const TypeSchema s = Document(
      "Tenant", "A consumer of inference services. Cluster-scoped.", TenantSpecSchema, nullptr);
  return &s;
}

namespace {

const TypeSchema* WorkloadPriorityClassSpecSchema() {
  static const TypeSchema s{
      "WorkloadPriorityClassSpec",
      "A named workload priority.",
      {{"value",
        T::kInteger,
        "The priority its workloads get: higher goes first and may preempt lower.",
        nullptr,
        {},
        true},
       {"description", T::kString, "What the class is for."}}};
  return &s;
}

}  // namespace

const TypeSchema* WorkloadPriorityClassDocumentSchema() {
  static const TypeSchema s =
      Document("WorkloadPriorityClass",
               "A named workload priority (Kueue's WorkloadPriorityClass): workloads labelled "
               "kueue.x-k8s.io/priority-class with its name get its value as their priority when "
               "written. Cluster-scoped.",
               WorkloadPriorityClassSpecSchema, nullptr, /*spec_required=*/true);
  return &s;
}

namespace {

const TypeSchema* NamespaceSpecSchema() {
  static const TypeSchema s{
      "NamespaceSpec",
      "What Kubernetes' namespace controller reads.",
      {{"finalizers", T::kIgnored, "strata deletes a namespace's objects itself"}}};
  return &s;
}

const TypeSchema* NamespaceStatusSchema() {
  static const TypeSchema s{"NamespaceStatus",
                            "Set by the server.",
                            {{"phase", T::kEnum, "Active.", nullptr, {"Active", "Terminating"}},
                             {"conditions", T::kIgnored, "set by the server"}}};
  return &s;
}

}  // namespace

const TypeSchema* NamespaceDocumentSchema() {
  static const TypeSchema s = [] {
    TypeSchema d{"Namespace",
                 "The scope of namespaced objects' names. Cluster-scoped. Deleting it deletes "
                 "every object in it.",
                 DocumentHead()};
    d.fields.push_back(
        {"spec", T::kObject, "What Kubernetes' namespace controller reads.", NamespaceSpecSchema});
    d.fields.push_back(
        {"status", T::kObject, "Set by the server: phase Active.", NamespaceStatusSchema});
    return d;
  }();
  return &s;
}

const TypeSchema* EventDocumentSchema() {
  static const TypeSchema s = [] {
    TypeSchema d{"Event", "Something that happened to an object.", DocumentHead()};
    d.fields.push_back({"involvedObject",
                        T::kObject,
                        "The object it happened to.",
                        ObjectReferenceSchema,
                        {},
                        true});
    d.fields.push_back({"type", T::kEnum, "Normal or Warning.", nullptr, {"Normal", "Warning"}});
    d.fields.push_back({"reason", T::kString, "One CamelCase word, e.g. Scheduled."});
    d.fields.push_back({"message", T::kString, "A sentence for people."});
    d.fields.push_back(
        {"count", T::kNonNegativeInteger, "How many times it happened (default 1)."});
    d.fields.push_back({"firstTimestamp", T::kTimestamp, "When it first happened."});
    d.fields.push_back({"lastTimestamp", T::kTimestamp, "When it last happened."});
    return d;
  }();
  return &s;
}

}  // namespace strata::api
