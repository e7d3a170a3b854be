#pragma once

#include <string>

#include "api/node.h"
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

// Service replicas. The service controller writes these on each replica pod when it creates it:
// the service version the replica serves, a hash of the engine template and resources (a
// rolling update replaces replicas whose hash differs), the model name clients ask for, and the
// number of pods in the replica's group (nodes per replica; more than one: LeaderWorkerSet's
// environment, LWS_LEADER_ADDRESS, LWS_GROUP_SIZE and LWS_WORKER_INDEX = owner.rank).
inline constexpr char kServiceVersionAnnotation[] = "strata.dev/service-version";
inline constexpr char kTemplateHashAnnotation[] = "strata.dev/template-hash";
inline constexpr char kServedModelAnnotation[] = "strata.dev/served-model";
inline constexpr char kGroupSizeAnnotation[] = "strata.dev/group-size";
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

// What the node agent needs to build the workers' environment (BuildWorkerEnvironments) from a
// bound pod of a Job. Returns InvalidArgument naming the annotation or field when the pod does
// not carry it.
Result<TrainingPod> TrainingPodFromPod(const api::Pod& pod);

// What the node agent needs to start one pod of a Service replica.
struct ReplicaPod {
  std::string service_name;
  int64_t replica = 0;
  int64_t rank = 0;            // within the replica's group; 0 is the leader
  int64_t group_size = 1;      // kGroupSizeAnnotation; absent: 1
  std::string leader_address;  // kLeaderAddressAnnotation; required when group_size > 1
  std::string served_model;    // kServedModelAnnotation; may be empty
};

// Reads a Service replica pod's owner and annotations. Returns InvalidArgument naming the field
// or annotation when the owner is not a Service, the group size is not an integer >= 1, the rank
// is outside the group, or a group of several pods has no leader address.
Result<ReplicaPod> ReplicaPodFromPod(const api::Pod& pod);

// The engine port the agent recorded on a replica pod (kEnginePortAnnotation); 0 when none is
// recorded yet. InvalidArgument naming the annotation when it is not a port.
Result<int> RecordedEnginePort(const api::Pod& pod);

// Where other machines reach a node's pods (MASTER_ADDR, a replica's endpoint): the node's
// kNodeAddressAnnotation, else its kubernetes.io/hostname label, else its name.
std::string NodeAddress(const api::Node& node);

// Terminal pods hold nothing; every other bound pod holds its node's resources.
bool PodTerminal(const api::Pod& pod);
// The stop reason on the pod, or empty.
std::string StopRequested(const api::Pod& pod);
// The value of annotation `key` on the pod, or nullptr.
const std::string* PodAnnotation(const api::Pod& pod, const char* key);

}  // namespace strata::node
