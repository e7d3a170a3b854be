#include "api/kinds.h"

#include "api/compat_schema.h"
#include "api/native_schema.h"

namespace strata::api {
namespace {

// What a Kueue kind becomes, the same in each of its versions.
constexpr std::string_view kClusterQueueMapsTo =
    "a Queue: resourceGroups' flavors and quotas become spec.flavors";
constexpr std::string_view kLocalQueueMapsTo =
    "a name workloads of its namespace may use for its ClusterQueue (spec.localQueues of that "
    "Queue); apply it with the ClusterQueue";
constexpr std::string_view kCohortMapsTo =
    "a Queue of its name in the cohort (spec.cohort) that only lends (spec.lendOnly): its "
    "resourceGroups are quota the ClusterQueues naming the cohort borrow, within their "
    "borrowing limits; it admits no workload. One level: parentName is refused";
constexpr std::string_view kPriorityClassMapsTo =
    "a WorkloadPriorityClass (strata.dev): its value becomes the priority (spec.priority) of the "
    "Jobs, Pods and Services labelled kueue.x-k8s.io/priority-class with its name when they are "
    "written, with it or later (a workload naming a class that does not exist is refused); "
    "changing or deleting the class leaves the priorities given";
constexpr std::string_view kTopologyMapsTo =
    "nothing: strata places a gang by any node label key a job names (spec.topology.level, or "
    "Kueue's podset topology annotations); a Topology's levels are checked and add no object";
constexpr std::string_view kTrainingRuntimeMapsTo =
    "nothing: the defaults (mlPolicy.numNodes, torch.numProcPerNode, the trainer step's image, "
    "command, args, env and resources) of the TrainJobs among the same manifests that name it; "
    "apply it with its TrainJobs";
constexpr std::string_view kLLMInferenceServiceMapsTo =
    "a Service serving model.name (default: its own name) with vLLM behind strata's gateway: "
    "replicas, parallelism as vLLM's flags, a worker as nodesPerReplica";

}  // namespace

const std::vector<KindInfo>& AllKinds() {
  static const std::vector<KindInfo> kKinds = {
      {kApiVersion, "Node", true, NodeDocumentSchema, DecodeNativeNode, ""},
      {kApiVersion, "Queue", true, QueueDocumentSchema, DecodeNativeQueue, ""},
      {kApiVersion, "ResourceFlavor", true, ResourceFlavorDocumentSchema,
       DecodeNativeResourceFlavor, ""},
      {kApiVersion, "Job", true, JobDocumentSchema, DecodeNativeJob, ""},
      {kApiVersion, "Service", true, ServiceDocumentSchema, DecodeNativeService, ""},
      {kApiVersion, "Pod", true, PodDocumentSchema, DecodeNativePod, ""},
      {kApiVersion, "Tenant", true, TenantDocumentSchema, DecodeNativeTenant, ""},
      {kApiVersion, "Event", true, EventDocumentSchema, DecodeNativeEvent, ""},
      {kApiVersion, "Namespace", true, NamespaceDocumentSchema, DecodeNativeNamespace, ""},
      {kApiVersion, "ConfigMap", true, ConfigMapDocumentSchema, DecodeNativeConfigMap, ""},
      {kApiVersion, "Secret", true, SecretDocumentSchema, DecodeNativeSecret, ""},
      {kApiVersion, "WorkloadPriorityClass", true, WorkloadPriorityClassDocumentSchema,
       DecodeNativeWorkloadPriorityClass, ""},
      {"v1", "Pod", false, CoreV1PodSchema, DecodeCoreV1Pod,
       "a Pod; nvidia.com/gpu limits become spec.resources.gpu, the kueue.x-k8s.io/queue-name "
       "label becomes spec.queue, scheduling.k8s.io/group-name joins a Volcano PodGroup"},
      {"v1", "Service", false, CoreV1ServiceSchema, DecodeCoreV1Service,
       "nothing: strata's gateway serves the models of the workloads it fronts, and pods reach "
       "each other at their node's address (a warning says so); apply it with kubectl on a "
       "Kubernetes cluster"},
      {"batch/v1", "Job", false, BatchJobSchema, DecodeBatchJob,
       "a Job: parallelism becomes replicas (completions must equal it), backoffLimit "
       "maxRestarts, activeDeadlineSeconds runtimeLimit; Indexed pods read JOB_COMPLETION_INDEX"},
      {"apps/v1", "Deployment", false, DeploymentSchema, DecodeDeployment,
       "a Service of one-pod replicas that run until deleted: replicas becomes minReplicas and "
       "maxReplicas, the container the engine, the name the model; strategy the rollout"},
      {"apps/v1", "StatefulSet", false, StatefulSetSchema, DecodeStatefulSet,
       "a Service as for a Deployment, whose pods are <name>-0, <name>-1 ... (ordinalNames), "
       "started one at a time under OrderedReady (orderedStart), updated without a surge"},
      {"leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", false, LeaderWorkerSetSchema,
       DecodeLeaderWorkerSet,
       "a Service whose replicas (groups) span size pods placed as one gang: the leader's "
       "container runs on rank 0 (leader), the workers' on the others, with LWS's environment "
       "and labels; a failed pod recreates its group"},
      {"jobset.x-k8s.io/v1alpha2", "JobSet", false, JobSetSchema, DecodeJobSet,
       "a Job, when every replicated job has one pod template: replicas = the sum of each "
       "replicated job's replicas x its parallelism; failurePolicy.maxRestarts becomes "
       "maxRestarts (times the child Jobs' backoffLimit + 1), the exclusive-topology annotation "
       "a Required topology (one child Job only); JOB_COMPLETION_INDEX is the pod's rank"},
      {"kubeflow.org/v1", "PyTorchJob", false, PyTorchJobSchema, DecodePyTorchJob,
       "a Job: replicas = Master + Worker replicas, nprocPerNode becomes procPerNode, "
       "elasticPolicy.maxRestarts (else runPolicy.backoffLimit) becomes maxRestarts"},
      {"trainer.kubeflow.org/v1alpha1", "TrainJob", false, TrainJobSchema, DecodeTrainJob,
       "a Job with its runtime's defaults (a TrainingRuntime or ClusterTrainingRuntime among the "
       "same manifests, or the built-in torch-distributed): numNodes becomes replicas, "
       "numProcPerNode procPerNode, resourcesPerNode resources; the trainer's fields override "
       "the runtime's"},
      {"trainer.kubeflow.org/v1alpha1", "TrainingRuntime", false, TrainingRuntimeSchema,
       DecodeTrainingRuntime, kTrainingRuntimeMapsTo},
      {"trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime", false,
       ClusterTrainingRuntimeSchema, DecodeClusterTrainingRuntime, kTrainingRuntimeMapsTo, false},
      {"serving.kserve.io/v1beta1", "InferenceService", false, InferenceServiceSchema,
       DecodeInferenceService,
       "a Service serving the model under the InferenceService's name, with a vLLM engine"},
      {"serving.kserve.io/v1alpha2", "LLMInferenceService", false,
       LLMInferenceServiceV1alpha2Schema, DecodeLLMInferenceService, kLLMInferenceServiceMapsTo},
      {"serving.kserve.io/v1alpha1", "LLMInferenceService", false,
       LLMInferenceServiceV1alpha1Schema, DecodeLLMInferenceService, kLLMInferenceServiceMapsTo},
      {"ray.io/v1", "RayCluster", false, RayClusterSchema, DecodeRayCluster,
       "a Job: the head and every worker group's pods as one gang, each pod running its group's "
       "`ray start` (the head at MASTER_ADDR:MASTER_PORT)"},
      {"ray.io/v1", "RayJob", false, RayJobSchema, DecodeRayJob,
       "a Job: its cluster as one gang whose head runs the entrypoint once Ray is up; the job "
       "ends with the entrypoint's exit status"},
      {"kueue.x-k8s.io/v1beta2", "ClusterQueue", false, ClusterQueueV1beta2Schema,
       DecodeClusterQueue, kClusterQueueMapsTo, false},
      {"kueue.x-k8s.io/v1beta1", "ClusterQueue", false, ClusterQueueV1beta1Schema,
       DecodeClusterQueue, kClusterQueueMapsTo, false},
      {"kueue.x-k8s.io/v1beta2", "LocalQueue", false, LocalQueueSchema, DecodeLocalQueue,
       kLocalQueueMapsTo},
      {"kueue.x-k8s.io/v1beta1", "LocalQueue", false, LocalQueueSchema, DecodeLocalQueue,
       kLocalQueueMapsTo},
      {"kueue.x-k8s.io/v1beta2", "ResourceFlavor", false, KueueResourceFlavorSchema,
       DecodeKueueResourceFlavor, "a ResourceFlavor", false},
      {"kueue.x-k8s.io/v1beta1", "ResourceFlavor", false, KueueResourceFlavorSchema,
       DecodeKueueResourceFlavor, "a ResourceFlavor", false},
      {"kueue.x-k8s.io/v1beta2", "Cohort", false, CohortSchema, DecodeCohort, kCohortMapsTo, false},
      {"kueue.x-k8s.io/v1beta1", "Cohort", false, CohortSchema, DecodeCohort, kCohortMapsTo, false},
      {"kueue.x-k8s.io/v1alpha1", "Cohort", false, CohortSchema, DecodeCohort, kCohortMapsTo,
       false},
      {"kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass", false, WorkloadPriorityClassSchema,
       DecodeWorkloadPriorityClass, kPriorityClassMapsTo, false},
      {"kueue.x-k8s.io/v1beta1", "WorkloadPriorityClass", false, WorkloadPriorityClassSchema,
       DecodeWorkloadPriorityClass, kPriorityClassMapsTo, false},
      {"kueue.x-k8s.io/v1beta2", "Topology", false, KueueTopologySchema, DecodeKueueTopology,
       kTopologyMapsTo, false},
      {"kueue.x-k8s.io/v1beta1", "Topology", false, KueueTopologySchema, DecodeKueueTopology,
       kTopologyMapsTo, false},
      {"kueue.x-k8s.io/v1alpha1", "Topology", false, KueueTopologySchema, DecodeKueueTopology,
       kTopologyMapsTo, false},
      {"batch.volcano.sh/v1alpha1", "Job", false, VolcanoJobSchema, DecodeVolcanoJob,
       "a Job, when every task has one pod template: replicas = the tasks' replicas, queue and "
       "priorityClassName as given, maxRetry maxRestarts when the job restarts on PodFailed "
       "(RestartJob) or its pods on failure; VK_TASK_INDEX is the pod's rank"},
      {"keda.sh/v1alpha1", "ScaledObject", false, ScaledObjectSchema, DecodeScaledObject,
       "the autoscaling of the Deployment, StatefulSet or LeaderWorkerSet among the same "
       "manifests that scaleTargetRef names: min/maxReplicaCount become its min/maxReplicas, a "
       "prometheus trigger on a vLLM metric its metric and per-replica target, cooldownPeriod "
       "its scale-to-zero delay; apply it with its target"},
      {"inference.networking.k8s.io/v1", "InferencePool", false, InferencePoolSchema,
       DecodeInferencePool,
       "the routing of the Deployments, StatefulSets and LeaderWorkerSets among the same "
       "manifests whose pod template labels match spec.selector: each serves the model name its "
       "vLLM engine answers to (--served-model-name, else --model, else vllm serve's argument) "
       "through strata's gateway, which is the endpoint picker; apply it with them"},
      {"inference.networking.x-k8s.io/v1alpha2", "InferenceObjective", false,
       InferenceObjectiveSchema, DecodeInferenceObjective,
       "a request class of the Services its poolRef's pool selects (their spec.objectives): "
       "requests naming it in the x-gateway-inference-objective header get its priority at the "
       "gateway (negative sheddable, 0 standard, positive critical); apply it with its pool"},
      {"scheduling.volcano.sh/v1beta1", "PodGroup", false, PodGroupSchema, DecodePodGroup,
       "the gang (spec.gang), queue and priority of the pods that name it in the "
       "scheduling.k8s.io/group-name annotation; apply it with its pods"},
      {"scheduling.volcano.sh/v1beta1", "Queue", false, VolcanoQueueSchema, DecodeVolcanoQueue,
       "a Queue in cohort \"volcano\" with quota in flavor \"default\": deserved becomes nominal, "
       "capability - deserved the borrowing limit, deserved - guarantee the lending limit",
       false},
  };
  return kKinds;
}

const KindInfo* FindKind(std::string_view api_version, std::string_view kind) {
  for (const KindInfo& k : AllKinds()) {
    if (k.api_version == api_version && k.kind == kind) return &k;
  }
  return nullptr;
}

}  // namespace strata::api
