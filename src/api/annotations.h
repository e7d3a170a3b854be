#pragma once

#include <string_view>

// Every strata.dev/* annotation and label name, and the other well-known names strata reads or
// writes on objects, in one place. The contract they carry is described where each group is
// used (api/pod_contract.h for the controller <-> node agent contract).
namespace strata::api {

// Annotations the scheduler adapter writes on each pod of a Job when it binds the gang: the run
// of the job the pod belongs to (JobPlacement::run), then torchrun's rendezvous.
inline constexpr char kJobRunAnnotation[] = "strata.dev/job-run";
inline constexpr char kRunIdAnnotation[] = "strata.dev/run-id";
inline constexpr char kMasterAddrAnnotation[] = "strata.dev/master-addr";
inline constexpr char kMasterPortAnnotation[] = "strata.dev/master-port";
inline constexpr char kNumNodesAnnotation[] = "strata.dev/num-nodes";
inline constexpr char kProcPerNodeAnnotation[] = "strata.dev/proc-per-node";
inline constexpr char kRestartCountAnnotation[] = "strata.dev/restart-count";
inline constexpr char kMaxRestartsAnnotation[] = "strata.dev/max-restarts";
inline constexpr char kCheckpointDirAnnotation[] = "strata.dev/checkpoint-dir";
// The pod's role (api/job.h JobRole), its index among the role's pods (Volcano's VK_TASK_INDEX)
// and the role's pod count, and where its workers stand in their torchrun world (api/job_roles.h
// TorchWorld; kNumNodesAnnotation counts its pods): its worker count and the RANK of the pod's
// LOCAL_RANK 0 (roles may run different procPerNode). Absent (a pod of a job without roles):
// torchrun's one role, "default", ranks from the pod's node rank.
inline constexpr char kRoleAnnotation[] = "strata.dev/role";
inline constexpr char kRoleIndexAnnotation[] = "strata.dev/role-index";
inline constexpr char kRolePodsAnnotation[] = "strata.dev/role-pods";
inline constexpr char kWorldSizeAnnotation[] = "strata.dev/world-size";
inline constexpr char kFirstWorkerRankAnnotation[] = "strata.dev/first-worker-rank";

// Written by the scheduler adapter on the first pod of a gang of standalone pods (a Volcano
// PodGroup, a service replica spanning nodes) in the same write that binds it: where every
// member goes (api/pod_contract.h GangMember, as JSON). The commit point of the gang's bind: a
// pass that finds members unbound binds them as it says, and the capacity it names is held from
// then on.
inline constexpr char kGangPlacementAnnotation[] = "strata.dev/gang-placement";

// On a Node: the address its pods' workers are reached at (MASTER_ADDR of a job whose rank 0
// runs there). Absent: the node's kubernetes.io/hostname label, else its name.
inline constexpr char kNodeAddressAnnotation[] = "strata.dev/address";

// On a Node on Kubernetes: "HOST:PORT" of the kubelet endpoint its agent serves (container logs,
// for `kubectl logs`); the Node's status.addresses (InternalIP) and daemonEndpoints say so to
// the API server.
inline constexpr char kKubeletEndpointAnnotation[] = "strata.dev/kubelet-endpoint";

// On a strata Job that runs a kubeflow.org/v1 PyTorchJob on a Kubernetes cluster (kubecompat):
// the uid of that PyTorchJob, which also owns the Job (ownerReferences: deleting it deletes the
// Job and its pods). A Job of the same name without it, or with another uid, is not the
// PyTorchJob's.
inline constexpr char kPyTorchJobUidAnnotation[] = "strata.dev/pytorchjob-uid";

// Set by the controllers on a pod that must stop: the value is the reason (one of the
// kStop... words) and kStopMessageAnnotation says why in a sentence. The agent sends SIGTERM,
// waits its grace period, sends SIGKILL, and reports the pod Failed (or Succeeded, if the
// processes exited 0). A stopped pod holds its GPUs until it is terminal.
inline constexpr char kStopRequestedAnnotation[] = "strata.dev/stop-requested";
inline constexpr char kStopMessageAnnotation[] = "strata.dev/stop-message";
inline constexpr std::string_view kStopPreempted = "Preempted";
// An eviction (pods/eviction, what kubectl drain sends) stopped it: its job is requeued whole
// as after a preemption, without counting one; its service replica is replaced.
inline constexpr std::string_view kStopEvicted = "Evicted";
inline constexpr std::string_view kStopGroupRestart = "GroupRestart";
inline constexpr std::string_view kStopJobFailed = "JobFailed";
inline constexpr std::string_view kStopJobFinished = "JobFinished";
inline constexpr std::string_view kStopJobDeleted = "JobDeleted";

// Written by the agent on a pod: the time (RFC 3339) of the newest checkpoint its workers wrote.
inline constexpr char kLastCheckpointAnnotation[] = "strata.dev/last-checkpoint";
// Written by the agent on a pod: when its processes started and when the last one ended
// (RFC 3339).
inline constexpr char kStartedAtAnnotation[] = "strata.dev/started-at";
inline constexpr char kFinishedAtAnnotation[] = "strata.dev/finished-at";

// Service replicas. The service controller writes these on each replica pod when it creates it:
// the service version the replica serves, a hash of the engine template and resources (a
// rolling update replaces replicas whose hash differs), the model name clients ask for, and the
// number of pods in the replica's group (nodes per replica; more than one: LeaderWorkerSet's
// environment, LWS_LEADER_ADDRESS, LWS_GROUP_SIZE and LWS_WORKER_INDEX = owner.rank).
inline constexpr char kServiceVersionAnnotation[] = "strata.dev/service-version";
inline constexpr char kTemplateHashAnnotation[] = "strata.dev/template-hash";
inline constexpr char kServedModelAnnotation[] = "strata.dev/served-model";
inline constexpr char kGroupSizeAnnotation[] = "strata.dev/group-size";
// The service's topology constraint, on each replica pod when it has one: the scheduler places a
// replica's pods within one domain of that node label key (Required) or prefers to (Preferred).
inline constexpr char kTopologyLevelAnnotation[] = "strata.dev/topology-level";
inline constexpr char kTopologyModeAnnotation[] = "strata.dev/topology-mode";
// LeaderWorkerSet's pod labels. A Service decoded from a LeaderWorkerSet carries the name label
// (its pods inherit it); the service controller then labels each replica pod with its group
// (replica index) and worker (rank) as LWS's controller does.
inline constexpr char kLwsNameLabel[] = "leaderworkerset.sigs.k8s.io/name";
inline constexpr char kLwsGroupIndexLabel[] = "leaderworkerset.sigs.k8s.io/group-index";
inline constexpr char kLwsWorkerIndexLabel[] = "leaderworkerset.sigs.k8s.io/worker-index";
// Written by the scheduler adapter when it binds a replica's group: the address of the node
// that runs rank 0 (LWS_LEADER_ADDRESS).
inline constexpr char kLeaderAddressAnnotation[] = "strata.dev/leader-address";
// Written by the agent on a replica's leader pod (rank 0): where its engine listens
// ("host:port"), as soon as it starts, and the time (RFC 3339, microseconds) its readiness probe
// first passed (weights loaded). The gateway routes only to ready, non-draining replicas.
inline constexpr char kEndpointAnnotation[] = "strata.dev/endpoint";
inline constexpr char kReadyAtAnnotation[] = "strata.dev/ready-at";
// Written by the service controller on every pod of a replica that is being drained (scale-down,
// rolling update, service deleted): the time (RFC 3339) the drain began. The gateway sends it
// no new requests; once its in-flight requests end (or the drain grace passes) the controller
// asks for the stop.
inline constexpr char kDrainingAnnotation[] = "strata.dev/draining";
inline constexpr std::string_view kStopScaledDown = "ScaledDown";
inline constexpr std::string_view kStopReplaced = "Replaced";
inline constexpr std::string_view kStopServiceDeleted = "ServiceDeleted";
// Written by the agent on every replica pod before its engine starts: the TCP port the engine
// listens on (STRATA_PORT). A restarted agent starts the pod again on the same port.
inline constexpr char kEnginePortAnnotation[] = "strata.dev/engine-port";
// Written by the agent on a replica pod whose engine it replaced with `strata engine-sim`
// (simulated GPUs): "simulated (engine-sim in place of vllm)".
inline constexpr char kEngineAnnotation[] = "strata.dev/engine";

// The ResourceFlavor whose quota the pod is charged to (absent: its queue has no flavors).
inline constexpr char kFlavorAnnotation[] = "strata.dev/flavor";
// On a pod: when the scheduler adapter bound it (RFC 3339 UTC). Cost accrues from here.
inline constexpr char kBoundAtAnnotation[] = "strata.dev/bound-at";
// On a Job: "true" while its GPUs idle under its queue's threshold and the queue lets idle work
// be reclaimed (idle reclaim); preemption then takes it first.
inline constexpr char kReclaimableAnnotation[] = "strata.dev/reclaimable";
// The label naming the Job a pod belongs to.
inline constexpr char kJobNameLabel[] = "strata.dev/job-name";
// The labels every replica pod carries: the service and the version it serves (on top of the
// service's own labels, so cost rolls up by team and project).
inline constexpr char kServiceNameLabel[] = "strata.dev/service";
inline constexpr char kServiceVersionLabel[] = "strata.dev/service-version";

// The pod annotation in which its node agent records how busy the pod keeps the simulated GPUs
// it holds, measured from its processes' CPU use: a share in [0, 1] (observe's
// FormatGpuActivity). Simulated GPUs follow it in place of the holder kind's typical activity
// once it is there.
inline constexpr char kGpuActivityAnnotation[] = "strata.dev/gpu-activity";

// A queue's idle policy, as annotations on its Queue object (so that Kueue-shaped queues carry
// it too):
//   strata.dev/idle-threshold: "0.3" or "30%"  the busy share under which a job idles (30 %)
//   strata.dev/idle-after: "30m"                how long it must stay under (a Go duration)
//   strata.dev/idle-reclaim: "true"             mark idle jobs reclaimable (default false)
inline constexpr char kIdleThresholdAnnotation[] = "strata.dev/idle-threshold";
inline constexpr char kIdleAfterAnnotation[] = "strata.dev/idle-after";
inline constexpr char kIdleReclaimAnnotation[] = "strata.dev/idle-reclaim";

// Node labels strata sets from what an inventory reports.
inline constexpr char kHostnameLabel[] = "kubernetes.io/hostname";
inline constexpr char kBlockLabel[] = "topology.strata.dev/block";
inline constexpr char kRackLabel[] = "topology.strata.dev/rack";
inline constexpr char kGpuModelLabel[] = "strata.dev/gpu-model";
// Marks a node whose GPUs are simulated.
inline constexpr char kSimulatedLabel[] = "strata.dev/simulated";
// NVIDIA GPU feature discovery's label: the product name with '-' for spaces
// ("NVIDIA-H100-80GB-HBM3"), so that ResourceFlavors written for Kubernetes select the node.
inline constexpr char kGpuProductLabel[] = "nvidia.com/gpu.product";
// GPU Feature Discovery's other labels strata writes on Kubernetes: the memory of one GPU in
// MiB, the GPU count, and that the node has GPUs.
inline constexpr char kGpuMemoryLabel[] = "nvidia.com/gpu.memory";
inline constexpr char kGpuCountLabel[] = "nvidia.com/gpu.count";
inline constexpr char kGpuPresentLabel[] = "nvidia.com/gpu.present";
// The extended resource NVIDIA's device plugin advertises whole GPUs as, and pods ask for them
// with.
inline constexpr char kGpuResourceName[] = "nvidia.com/gpu";

// What the inventory agent (strata agent --inventory, a DaemonSet on GPU nodes) adds to its
// Node beside GPU Feature Discovery's labels: how many NVLink islands its GPUs form, whether any
// GPU is in MIG mode, how many GPUs are unhealthy (an Xid that takes a GPU out of service, or
// uncorrected ECC errors), and, as an annotation, each GPU's health as a JSON list of
// {"uuid", "healthy", "reason"}. Its GPUs themselves go in kNodeGpusAnnotation.
inline constexpr char kNvlinkIslandsLabel[] = "strata.dev/nvlink-islands";
inline constexpr char kMigEnabledLabel[] = "strata.dev/mig-enabled";
inline constexpr char kUnhealthyGpusLabel[] = "strata.dev/unhealthy-gpus";
inline constexpr char kGpuHealthAnnotation[] = "strata.dev/gpu-health";
// The pod labels that name the team and the project a pod's cost and use roll up to.
inline constexpr char kTeamLabel[] = "team";
inline constexpr char kProjectLabel[] = "project";

// On Kubernetes (the store over the Kubernetes API, kubestore/): a Pod's whole strata spec, as
// JSON, beside the v1 spec made of it; a Node's GPU inventory (its status.gpus), as JSON.
inline constexpr char kPodSpecAnnotation[] = "strata.dev/pod-spec";
inline constexpr char kNodeGpusAnnotation[] = "strata.dev/gpus";
// On Kubernetes, the taint (NoSchedule) on the nodes a control plane's own agent runs (strata up
// --store kubernetes without --no-nodes): that agent runs strata's pods only, so other schedulers
// place no one else's pod there; strata's scheduler places its pods there as if untainted.
inline constexpr char kStrataPodsOnlyTaint[] = "strata.dev/strata-pods-only";

// What the node agent reports on a pod of strata's through these annotations. On Kubernetes a
// node's credentials may write a pod's status and nothing else of it (NodeRestriction), so the
// Kubernetes store carries them as status conditions of the same names (kubestore's pod mapping).
inline constexpr std::string_view kAgentReportedAnnotations[] = {
    kStartedAtAnnotation,      kFinishedAtAnnotation, kReadyAtAnnotation,
    kEndpointAnnotation,       kEnginePortAnnotation, kEngineAnnotation,
    kLastCheckpointAnnotation, kGpuActivityAnnotation};

// The label every Pod strata writes on Kubernetes carries, with the value kManagedByStrata: the
// store's Pods there are the pods that have it.
inline constexpr char kManagedByLabel[] = "app.kubernetes.io/managed-by";
inline constexpr char kManagedByStrata[] = "strata";
// On a Pod that a virtual kubelet's store reads although strata did not make it (a Deployment's
// ReplicaSet's, a batch Job's, kubectl run's), bound to the agent's Node: set by that store's
// mapping (kubestore/foreign_pod_mapping.h), never written to the server. kForeignPodAnnotation
// holds the name of the container whose command the node agent runs (its process and log are
// named after it); kCannotRunAnnotation, when set, why the pod cannot run as local processes
// (the agent fails it with reason kCannotRunReason and that message); kIgnoredFieldsAnnotation
// what the agent accepts without honouring (the image...), one Warning event when it starts;
// kForeignDeletingAnnotation, on one deleted with a grace period (metadata.deletionTimestamp),
// that grace in seconds: the agent stops its processes within it (with kStopRequestedAnnotation
// "Deleted"), then deletes the pod for good, as the kubelet does.
inline constexpr char kForeignPodAnnotation[] = "strata.dev/foreign-pod";
inline constexpr char kForeignDeletingAnnotation[] = "strata.dev/foreign-deleting";
inline constexpr char kCannotRunAnnotation[] = "strata.dev/cannot-run";
inline constexpr char kIgnoredFieldsAnnotation[] = "strata.dev/ignored-fields";
inline constexpr char kCannotRunReason[] = "CannotRunAsProcess";
// The GPUs the agent gave a foreign pod for its nvidia.com/gpu at admission (node/gpu_allocator.h),
// as a JSON array of v1 ResourceHealth ({"resourceID": the GPU's UUID, "health": "Healthy"}):
// written by the agent, reported as the container's allocatedResourcesStatus and read back from
// it, so that a restarted agent gives them to no other pod.
inline constexpr char kAllocatedGpusAnnotation[] = "strata.dev/allocated-gpus";
// On a foreign pod whose container asks for a share of a GPU (HAMi's nvidia.com/gpumem,
// nvidia.com/gpucores...): those resources ("nvidia.com/gpumem=4000"), which the agent refuses
// at admission.
inline constexpr char kGpuShareRequestAnnotation[] = "strata.dev/gpu-share-request";
// Whether `key` is one of the annotations above that only a virtual kubelet's store sets. The
// API refuses them on what a user writes: a pod that claimed to be foreign would choose its own
// CUDA_VISIBLE_DEVICES and the other variables strata reserves.
inline bool IsKubeletStoreAnnotation(std::string_view key) {
  return key == kForeignPodAnnotation || key == kForeignDeletingAnnotation ||
         key == kCannotRunAnnotation || key == kIgnoredFieldsAnnotation ||
         key == kAllocatedGpusAnnotation || key == kGpuShareRequestAnnotation;
}

}  // namespace strata::api
