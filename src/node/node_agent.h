#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/pod.h"
#include "cluster/cache.h"
#include "cluster/event_recorder.h"
#include "common/clock.h"
#include "common/status.h"
#include "node/checkpoint_watcher.h"
#include "node/gpu_activity.h"
#include "node/gpu_allocator.h"
#include "node/node_runtime.h"
#include "node/pod_cidr.h"
#include "node/pod_prober.h"
#include "node/replica_launch.h"
#include "store/store.h"

namespace strata::node {

struct NodeAgentOptions {
  // The Node objects whose pods this agent runs: this machine's node, or every simulated node
  // that one process serves (their pods all run here, as real processes).
  std::vector<std::string> node_names;
  // Checkpoint directories of training jobs that name none (or a relative one) go under
  // "<data_dir>/checkpoints/<namespace>/<job>".
  std::string data_dir;
  // How long a stopped pod's processes get between SIGTERM and SIGKILL.
  Duration stop_grace = std::chrono::seconds(10);
  // The environment every process starts from (the runtime passes nothing else on): PATH, HOME
  // and the like. The pod's own variables and torchrun's are added on top.
  api::Environment base_env;
  // The control plane's base URL ("http://127.0.0.1:7070"). When set, training workers get
  // STRATA_CHECKPOINT_URL, the pod's checkpoint endpoint: one POST there reports a checkpoint
  // written now. Empty: checkpoints are reported only through STRATA_CHECKPOINT_DIR.
  std::string api_url;
  // Set on nodes with simulated GPUs: Service replicas bound to GPUs run `strata engine-sim` in
  // place of their real engine (see BuildReplicaLaunch), and the pod says so
  // (api::kEngineAnnotation); replicas without GPUs run their own command.
  std::optional<EngineSimSubstitution> engine_sim;
  // The longest a readiness probe of a replica's engine (GET /health) may take.
  Duration readiness_timeout = std::chrono::milliseconds(200);
  // How long each measurement of a running pod's CPU use lasts, from which the busy share of
  // the simulated GPUs it holds is derived (GpuActivityMeter). Must be > 0.
  Duration gpu_activity_window = std::chrono::seconds(30);
  // An agent running as root runs pods as an unprivileged user (PodIdentity); one that asks to
  // run as root does so only when this is set (the admin's --allow-root-pods), else it fails.
  bool allow_root_pods = false;
  // A virtual kubelet's --pod-cidr (PodCidr::Parse; empty: none): each foreign pod (one strata
  // did not make, api::kForeignPodAnnotation) gets an IP of its own from it, as a kubelet's
  // network plugin gives one. strata's own pods, and every pod without it, share their node's
  // address (their ports are picked per pod).
  std::string pod_cidr;
};

// What a node agent's processes start from when no other environment is given: this process's
// PATH (or a standard one), HOME, LANG, USER, TMPDIR and PYTHONPATH.
api::Environment DefaultBaseEnvironment();

// The node agent: runs the pods bound to its nodes as real processes and reports on them.
//
// Each pass (RunOnce) reads the Pods bound to its nodes (spec.nodeName) from the store and
//  - starts a Pending pod's processes with the NodeRuntime: a training pod (owner kind Job) gets
//    procPerNode workers, each with torchrun's environment (api::BuildWorkerEnvironments), its
//    GPUs in CUDA_VISIBLE_DEVICES and STRATA_CHECKPOINT_DIR, or, when its command runs torchrun
//    itself (api::IsTorchrunLauncher), that one launcher (api::BuildLauncherEnvironment); any
//    other pod gets one process. The command is the template's command followed by its args,
//    each `$(NAME)` in them expanded from the process's environment. A Service replica pod (owner
//    kind Service) gets one engine process (BuildReplicaLaunch): a free port, recorded on the
//    pod (api::kEnginePortAnnotation, and api::kEndpointAnnotation "<node address>:<port>" on the
//    group's leader) in a write of its own before the engine starts, so that a restarted agent
//    reuses it; the node address is api::NodeAddress of the pod's Node;
//  - probes the engine of each running replica leader that is not ready yet and has no
//    readiness probe of its own (GET /health on its port, readiness_timeout, all at once) and
//    records the first 200 as api::kReadyAtAnnotation;
//  - runs the probes of each running pod whose template has any (PodProber, as the kubelet
//    does, never waiting for an attempt): while its readiness probe passes the pod carries
//    api::kReadyAtAnnotation, and loses it when the probe fails; each failed attempt is a
//    Warning event "Unhealthy" ("Liveness probe failed: HTTP probe failed with statuscode:
//    500"); a liveness or startup probe failing failureThreshold times stops the pod
//    (SIGTERM, its terminationGracePeriodSeconds or stop_grace, SIGKILL), with a "Killing"
//    event, and reports it Failed with reason Unhealthy and the probe's last failure, so its
//    workload restarts it as it restarts any failed pod (a Service replaces the replica, a Job
//    restarts its group);
//  - stops a pod marked for stopping (api::kStopRequestedAnnotation), and one deleted from the
//  store:
//    SIGTERM, stop_grace, SIGKILL, every pod being stopped at once;
//  - writes each pod's status when it changes, in one conditional write per pod (its
//    resourceVersion): phase Running once started, Succeeded when every process exited 0,
//    Failed otherwise (exit code, reason Error/StartError/ProcessesLost or the stop reason, and
//    a message naming the process), api::kStartedAtAnnotation, api::kFinishedAtAnnotation, and the
//    newest checkpoint its job's workers wrote (api::kLastCheckpointAnnotation, seen by a
//    CheckpointWatcher on the job's checkpoint dir), and a replica's readiness;
//  - measures the CPU use of each running pod that holds simulated GPUs (on a Node labelled
//    simulated), once per gpu_activity_window (NodeRuntime::CpuTime), and records the busy share
//    of its GPUs that it stands for (GpuActivityMeter) on the pod as
//    api::kGpuActivityAnnotation when none is recorded or it moved by kGpuActivityStep or
//    more, so that a pod writes rarely: once, and again only when its use changes. A replica
//    running engine-sim in place of its engine is left out: the simulator's CPU use says
//    nothing about the GPU work it stands for;
//  - forgets a terminal pod's processes (its logs stay).
// Pods strata did not make (api::kForeignPodAnnotation: a Deployment's, a batch Job's, read by a
// virtual kubelet's store, kubestore/foreign_pod_mapping.h) run as a kubelet runs them: one
// process named after their container, at an IP of their own from pod_cidr when set; one that
// cannot run as a process (api::kCannotRunAnnotation) is failed with reason
// api::kCannotRunReason and a Warning event "Failed" saying why; what is ignored (the image) is
// one Warning event "IgnoredFields" at its start; processes that end are started again in place
// under its restartPolicy (Always, or OnFailure after a failure; a liveness probe's kill too),
// after the kubelet's back-off (10 s doubling to 5 min, reason CrashLoopBackOff meanwhile),
// counting restartCount; one being deleted (api::kForeignDeletingAnnotation) is stopped within
// its grace period and then deleted for good. At admission, before anything of it starts, a
// foreign pod is given the whole GPUs its nvidia.com/gpu asks for, as the kubelet's device
// manager and NVIDIA's device plugin give them (GpuAllocator: none that a pod here holds,
// strata's own pods' assigned GPUs included; one NVLink island when one has room), in
// CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES over any value of its own (a Warning event
// "GpuEnvOverridden" says so; a pod asking none sees none), and reported on it
// (api::kAllocatedGpusAnnotation, with each GPU's health) until it ends or is deleted; a pod
// whose GPUs are not free is failed with the kubelet's reason UnexpectedAdmissionError and
// message (and a Warning event), one asking for a share of a GPU with
// kGpuShareUnsupportedReason. A restarted agent learns what each pod holds from its processes'
// state file (PodStatus::gpu_indices) or, for one backing off, from its status.
// The first pass first adopts what a previous agent left running (NodeRuntime::Adopt, after a
// kill -9): adopted processes are supervised again and reported like the others; a pod whose
// processes are gone while the store says Running is reported Failed (ProcessesLost), so the job
// controller restarts its group from the last checkpoint; processes whose pod is no longer in
// the store are stopped. Nothing is left running unaccounted.
//
// The agent reads the pods bound to its nodes through a cache (cluster::Cache) and writes to
// the Store under it: the control plane's own (in `strata up`) or one that speaks to a remote
// control plane (`strata agent`). It does not heartbeat its nodes; its owner
// does. A conflicting write (someone else updated the pod) is retried on the next pass.
//
// Owned by the loop that drives it; RunOnce is called from one thread at a time. Not
// thread-safe otherwise.
class NodeAgent {
 public:
  // `store`, `cache` (following Nodes and Pods with cluster::kPodsByNode, over the same store),
  // `runtime` and `clock` must outlive the agent.
  NodeAgent(store::Store& store, cluster::Cache& cache, NodeRuntime& runtime, const Clock& clock,
            NodeAgentOptions options);
  ~NodeAgent();
  NodeAgent(const NodeAgent&) = delete;
  NodeAgent& operator=(const NodeAgent&) = delete;

  // Runs one pass (see above). Each pod is handled on its own: a pod whose write fails keeps its
  // old status until a later pass; the pass goes on and returns the first error.
  Status RunOnce();

  // Stops every pod whose processes this agent holds (SIGTERM, stop_grace, SIGKILL, all at
  // once), for an owner that shuts down with its pods. Their stored status is left as it is: a
  // later agent finds the processes gone and reports the pods Failed (ProcessesLost), so their
  // jobs restart from the last checkpoint and their services replace them. REQUIRES: no
  // RunOnce runs concurrently.
  void StopEverything();

  // The checkpoint directory of `job_name` in `namespace_name` on this machine, given the
  // directory the job names (empty: none).
  std::string CheckpointDir(const std::string& namespace_name, const std::string& job_name,
                            const std::string& job_dir) const;

 private:
  struct Pass;

  Status Reconcile(Pass& pass, const store::Object& raw, const api::Pod& pod);
  // What the runtime starts for the pod (and the watch on its checkpoint dir); what the pod
  // says about it goes on `after` (api::kEngineAnnotation). InvalidArgument naming the field when
  // the pod cannot run.
  Result<PodSpec> BuildPodSpec(Pass& pass, const store::Object& raw, const api::Pod& pod,
                               api::Pod& after);
  // A replica pod's engine process (see BuildPodSpec).
  Result<std::vector<ProcessSpec>> BuildReplicaProcesses(Pass& pass, const api::Pod& pod,
                                                         api::Pod& after);
  // Picks the port of a replica pod that has none and writes it (and the leader's endpoint) on
  // the pod. Returns the pod as stored now.
  Result<store::Object> RecordEnginePort(Pass& pass, const store::Object& raw, const api::Pod& pod);
  // Probes the engines of the pass's running replica leaders that are not ready yet and notes
  // the ones that answered (Pass::ready).
  void ProbeReadiness(Pass& pass);
  // The Node `name` from the store (read once per pass), or nullptr when it is not there.
  const api::Node* FindNode(Pass& pass, const std::string& name);
  // Stops the pods `uids` at once, each with its grace in `grace` or else stop_grace.
  void StopAll(const std::vector<std::string>& uids,
               const std::map<std::string, Duration>& grace = {});
  // Ticks the probers of the pass's running pods (making those missing), records their failed
  // attempts as events, and notes on `pass` the pods to kill and the readiness of the others.
  void RunProbes(Pass& pass);
  // The IP of `pod`: its own from pod_cidr (picked now when it has none), or its node's.
  std::string PodIpOf(Pass& pass, const std::string& uid, const api::Pod& pod);
  // The end of a foreign pod being deleted whose processes have stopped: the pod deleted for
  // good, its processes forgotten.
  Status FinishDeletion(const store::Object& raw, const api::Pod& pod);
  // Where the probes of `pod` reach it and how its exec probes run.
  ProbeTarget ProbeTargetOf(const std::string& uid, const api::Pod& pod);
  // Learns what the pass's foreign pods hold that gpus_ does not know yet (after a restart):
  // from the state of their processes, else from their api::kAllocatedGpusAnnotation.
  void RestoreGpus(Pass& pass);
  // Gives a foreign pod its GPUs at admission (see the class comment), recorded on `after`.
  // The kubelet's error when they are not free; InvalidArgument for a share of a GPU.
  Status AdmitGpus(Pass& pass, const std::string& uid, const api::Pod& pod, api::Pod& after);
  // Sets the variables that say which GPUs a foreign pod's processes see (GpuVisibilityEnv of
  // what it holds) in `env` over its own, saying so in an event, and its GPUs in `spec`.
  void SetGpuVisibility(Pass& pass, const std::string& uid, const api::Pod& pod,
                        api::Environment& env, PodSpec& spec);
  // Watches `dir` for checkpoints (the watcher made at the first call).
  Status WatchCheckpoints(const std::string& dir);
  void ReportCheckpoint(Pass& pass, const api::Pod& pod, api::Pod& after);
  // Measures a running pod's CPU use when it is due, and records the busy share of the
  // simulated GPUs it holds on `after` when worth a write (see the class comment).
  void ReportGpuActivity(Pass& pass, const std::string& uid, const api::Pod& pod, api::Pod& after);
  Status Write(const store::Object& raw, const api::Pod& before, const api::Pod& after);

  store::Store& store_;
  cluster::Cache& cache_;
  NodeRuntime& runtime_;
  const Clock& clock_;
  NodeAgentOptions options_;
  std::set<std::string> node_names_;
  bool adopted_ = false;
  // Pods whose processes the runtime holds for this agent (started or adopted), by uid.
  std::set<std::string> known_;
  // Checkpoint watchers by directory, shared by the job's pods on this machine.
  // The checkpoint dirs of the jobs with pods here; dirs no pod uses are unwatched each pass.
  std::unique_ptr<CheckpointWatcher> checkpoints_;
  GpuActivityMeter gpu_activity_;
  // The probers of running pods with probes, by uid.
  std::map<std::string, std::unique_ptr<PodProber>> probers_;
  // Why a pod waits to start (CreateContainerConfigError), as the kubelet says it.
  cluster::EventRecorder events_;
  std::optional<PodCidr> pod_cidr_;
  // The IPs given to foreign pods from pod_cidr_, by uid.
  std::map<std::string, std::string> pod_ips_;
  // Foreign pods waiting out their back-off before they start again in place: uid -> when.
  std::map<std::string, TimePoint> restart_at_;
  // The GPUs foreign pods here hold, from admission until they end.
  GpuAllocator gpus_;
};

}  // namespace strata::node
