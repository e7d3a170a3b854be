#pragma once

#include <string>

#include "api/pod.h"
#include "common/status.h"
#include "node/torchrun_env.h"

// The contract between the controllers and the node agent, carried on Pod objects: what a
// training pod's workers need (torchrun's rendezvous, ranks, restart count), the request to stop
// a pod, and what the agent reports back (start and finish times, the last checkpoint). It lives
// here, below the controllers, because both sides read it. Pure functions; thread-safe.
namespace strata::node {

// Annotations the scheduler adapter writes on each pod of a Job when it binds the gang.
inline constexpr char kRunIdAnnotation[] = "strata.dev/run-id";
inline constexpr char kMasterAddrAnnotation[] = "strata.dev/master-addr";
inline constexpr char kMasterPortAnnotation[] = "strata.dev/master-port";
inline constexpr char kNumNodesAnnotation[] = "strata.dev/num-nodes";
inline constexpr char kProcPerNodeAnnotation[] = "strata.dev/proc-per-node";
inline constexpr char kRestartCountAnnotation[] = "strata.dev/restart-count";
inline constexpr char kMaxRestartsAnnotation[] = "strata.dev/max-restarts";
inline constexpr char kCheckpointDirAnnotation[] = "strata.dev/checkpoint-dir";

// On a Node: the address its pods' workers are reached at (MASTER_ADDR of a job whose rank 0
// runs there). Absent: the node's kubernetes.io/hostname label, else its name.
inline constexpr char kNodeAddressAnnotation[] = "strata.dev/address";

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
// Written by the agent on a pod: when its processes started and when the last one ended
// (RFC 3339).
inline constexpr char kStartedAtAnnotation[] = "strata.dev/started-at";
inline constexpr char kFinishedAtAnnotation[] = "strata.dev/finished-at";

// What the node agent needs to build the workers' environment (BuildWorkerEnvironments) from a
// bound pod of a Job. Returns InvalidArgument naming the annotation or field when the pod does
// not carry it.
Result<TrainingPod> TrainingPodFromPod(const api::Pod& pod);

// Terminal pods hold nothing; every other bound pod holds its node's resources.
bool PodTerminal(const api::Pod& pod);
// The stop reason on the pod, or empty.
std::string StopRequested(const api::Pod& pod);
// The value of annotation `key` on the pod, or nullptr.
const std::string* PodAnnotation(const api::Pod& pod, const char* key);

}  // namespace strata::node
