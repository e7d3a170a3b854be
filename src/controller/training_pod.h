#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/job.h"
#include "api/node.h"
#include "api/pod.h"
#include "common/clock.h"
#include "common/status.h"
#include "node/torchrun_env.h"

// The contract between the controllers and the node agent, carried on Pod objects: what a
// training pod's workers need (torchrun's rendezvous, ranks, restart count), the request to stop
// a pod, and what the agent reports back (the last checkpoint). Pure functions; thread-safe.
namespace strata::controller {

// Annotations the scheduler adapter writes on each pod of a Job when it binds the gang.
inline constexpr char kRunIdAnnotation[] = "strata.dev/run-id";
inline constexpr char kMasterAddrAnnotation[] = "strata.dev/master-addr";
inline constexpr char kMasterPortAnnotation[] = "strata.dev/master-port";
inline constexpr char kNumNodesAnnotation[] = "strata.dev/num-nodes";
inline constexpr char kProcPerNodeAnnotation[] = "strata.dev/proc-per-node";
inline constexpr char kRestartCountAnnotation[] = "strata.dev/restart-count";
inline constexpr char kMaxRestartsAnnotation[] = "strata.dev/max-restarts";
inline constexpr char kCheckpointDirAnnotation[] = "strata.dev/checkpoint-dir";
// The ResourceFlavor whose quota the pod is charged to (absent: its queue has no flavors).
inline constexpr char kFlavorAnnotation[] = "strata.dev/flavor";
// The label naming the Job a pod belongs to.
inline constexpr char kJobNameLabel[] = "strata.dev/job-name";

// Set by the controllers on a pod that must stop: the value is the reason (one of the
// kStop... words) and kStopMessageAnnotation says why in a sentence. The agent sends SIGTERM,
// waits its grace period, sends SIGKILL, and reports the pod Failed (or Succeeded, if the
// processes exited 0). A stopped pod holds its GPUs until it is terminal.
inline constexpr char kStopRequestedAnnotation[] = "strata.dev/stop-requested";
inline constexpr char kStopMessageAnnotation[] = "strata.dev/stop-message";
inline constexpr std::string_view kStopPreempted = "Preempted";
inline constexpr std::string_view kStopGroupRestart = "GroupRestart";
inline constexpr std::string_view kStopJobFailed = "JobFailed";
inline constexpr std::string_view kStopJobFinished = "JobFinished";
inline constexpr std::string_view kStopJobDeleted = "JobDeleted";

// Written by the agent on a pod: the time (RFC 3339) of the newest checkpoint its workers wrote.
inline constexpr char kLastCheckpointAnnotation[] = "strata.dev/last-checkpoint";

// Where workers reach a node: the node's kAddressAnnotation, else its
// kubernetes.io/hostname label, else its name.
inline constexpr char kAddressAnnotation[] = "strata.dev/address";
std::string NodeAddress(const api::Node& node);

// torchrun's default rendezvous port; the adapter gives each job on one address its own port
// counting up from here.
inline constexpr int kFirstMasterPort = 29500;

// What the adapter knows when it binds one pod of a job run.
struct JobPodPlacement {
  int64_t rank = 0;
  std::string node_name;
  std::vector<api::AssignedGpu> gpus;
  std::string flavor;  // empty: none
};

// Everything one run of the job shares.
struct JobRun {
  std::string run_id;
  std::string master_addr;  // the rank-0 pod's node
  int master_port = kFirstMasterPort;
  int64_t restart_count = 0;
};

// "<job>-worker-<rank>", Kubeflow's pod names.
std::string JobPodName(std::string_view job_name, int64_t rank);

// The bound Pod for rank `placement.rank` of `job`: owner, queue, priority, resources,
// template, node and GPUs, restart policy Never (the job controller restarts the whole group,
// never one pod), and the annotations above.
api::Pod MakeJobPod(const api::Job& job, const JobRun& run, const JobPodPlacement& placement);

// What the node agent needs to build the workers' environment (node::BuildWorkerEnvironments)
// from a pod made by MakeJobPod. Returns InvalidArgument naming the annotation or field when the
// pod does not carry it.
Result<node::TrainingPod> TrainingPodFromPod(const api::Pod& pod);

// Terminal pods hold nothing; every other bound pod holds its node's resources.
bool PodTerminal(const api::Pod& pod);
// The stop reason on the pod, or empty.
std::string StopRequested(const api::Pod& pod);
// Marks `pod` for stopping with `reason` and `message`; a pod already marked keeps its first
// reason. Returns true when it changed.
bool RequestStop(api::Pod& pod, std::string_view reason, std::string_view message);
// The pod's reported checkpoint time, if any and well formed.
std::optional<TimePoint> PodLastCheckpoint(const api::Pod& pod);

}  // namespace strata::controller
