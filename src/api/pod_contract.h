#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/annotations.h"
#include "api/node.h"
#include "api/pod.h"
#include "api/torchrun_env.h"
#include "common/status.h"

// The contract between the controllers and the node agent, carried on Pod objects: what a
// training pod's workers need (torchrun's rendezvous, ranks, restart count), the request to stop
// a pod, and what the agent reports back (start and finish times, the last checkpoint). It lives
// here, below the controllers, because both sides read it. Pure functions; thread-safe.
namespace strata::api {

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
  // The pod carries kLwsNameLabel: a LeaderWorkerSet's, which gets LWS's environment even in a
  // group of one.
  bool leader_worker_set = false;
};

// Reads a Service replica pod's owner and annotations. Returns InvalidArgument naming the field
// or annotation when the owner is not a Service, the group size is not an integer >= 1, the rank
// is outside the group, or a group of several pods has no leader address.
Result<ReplicaPod> ReplicaPodFromPod(const api::Pod& pod);

// The engine port the agent recorded on a replica pod (kEnginePortAnnotation); 0 when none is
// recorded yet. InvalidArgument naming the annotation when it is not a port.
Result<int> RecordedEnginePort(const api::Pod& pod);

// One member of a gang's placement (kGangPlacementAnnotation).
struct GangMember {
  std::string pod;
  std::string node_name;
  std::vector<AssignedGpu> gpus;

  bool operator==(const GangMember&) const = default;
};

// The annotation's value for `members`, and back. Decoding returns InvalidArgument naming the
// annotation and the field when the text is not such a list.
std::string EncodeGangPlacement(const std::vector<GangMember>& members);
Result<std::vector<GangMember>> DecodeGangPlacement(std::string_view text);

// Where other machines reach a node's pods (MASTER_ADDR, a replica's endpoint): the node's
// kNodeAddressAnnotation, else its kubernetes.io/hostname label, else its name.
std::string NodeAddress(const api::Node& node);

// Terminal pods hold nothing; every other bound pod holds its node's resources.
bool PodTerminal(const api::Pod& pod);
// The stop reason on the pod, or empty.
std::string StopRequested(const api::Pod& pod);
// The value of annotation `key` on the pod, or nullptr.
const std::string* PodAnnotation(const api::Pod& pod, const char* key);

}  // namespace strata::api
