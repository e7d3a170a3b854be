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
#include "node/pod_contract.h"
#include "node/torchrun_env.h"

// How the controllers make and mark the pods of training jobs, on top of the pod contract with
// the node agent (node/pod_contract.h). Pure functions; thread-safe.
namespace strata::controller {

// The pod contract shared with the node agent (node/pod_contract.h), named here as the
// controllers always have.
using node::kCheckpointDirAnnotation;
using node::kLastCheckpointAnnotation;
using node::kMasterAddrAnnotation;
using node::kMasterPortAnnotation;
using node::kMaxRestartsAnnotation;
using node::kNodeAddressAnnotation;
using node::kNumNodesAnnotation;
using node::kProcPerNodeAnnotation;
using node::kRestartCountAnnotation;
using node::kRunIdAnnotation;
using node::kStopGroupRestart;
using node::kStopJobDeleted;
using node::kStopJobFailed;
using node::kStopJobFinished;
using node::kStopMessageAnnotation;
using node::kStopPreempted;
using node::kStopRequestedAnnotation;
using node::NodeAddress;
using node::PodTerminal;
using node::StopRequested;
using node::TrainingPodFromPod;

// The ResourceFlavor whose quota the pod is charged to (absent: its queue has no flavors).
inline constexpr char kFlavorAnnotation[] = "strata.dev/flavor";
// On a Job: "true" while its GPUs idle under its queue's threshold and the queue lets idle work
// be reclaimed (idle_reclaim.h); preemption then takes it first.
inline constexpr char kReclaimableAnnotation[] = "strata.dev/reclaimable";
// The label naming the Job a pod belongs to.
inline constexpr char kJobNameLabel[] = "strata.dev/job-name";

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

// Marks `pod` for stopping with `reason` and `message`; a pod already marked keeps its first
// reason. Returns true when it changed.
bool RequestStop(api::Pod& pod, std::string_view reason, std::string_view message);
// The pod's reported checkpoint time, if any and well formed.
std::optional<TimePoint> PodLastCheckpoint(const api::Pod& pod);

}  // namespace strata::controller
