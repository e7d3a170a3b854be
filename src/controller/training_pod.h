#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/annotations.h"
#include "api/job.h"
#include "api/node.h"
#include "api/pod.h"
#include "api/pod_contract.h"
#include "common/clock.h"
#include "common/status.h"

// How the controllers make and mark the pods of training jobs, on top of the pod contract with
// the node agent (api/pod_contract.h). Pure functions; thread-safe.
namespace strata::controller {

// torchrun's default rendezvous port; the adapter gives each job on one address its own port
// counting up from here.
inline constexpr int kFirstMasterPort = 29500;

// "<job>-worker-<rank>", Kubeflow's pod names.
std::string JobPodName(std::string_view job_name, int64_t rank);

// The bound Pod of rank `pod.rank` of `job`'s run `placement`: owner, queue, priority,
// resources, template, node and GPUs, restart policy Never (the job controller restarts the
// whole group, never one pod), and the pod contract's annotations: the run (kJobRunAnnotation),
// torchrun's rendezvous (the job's uid as its run id, the placement's master address and port,
// the job's restart count), the flavor and the bind time.
api::Pod MakeJobPod(const api::Job& job, const api::JobPlacement& placement,
                    const api::JobPodAssignment& pod);

// The run a job's pod belongs to (kJobRunAnnotation); 0 when it carries none.
int64_t PodJobRun(const api::Pod& pod);

// Marks `pod` for stopping with `reason` and `message`; a pod already marked keeps its first
// reason. Returns true when it changed.
bool RequestStop(api::Pod& pod, std::string_view reason, std::string_view message);
// The pod's reported checkpoint time, if any and well formed.
std::optional<TimePoint> PodLastCheckpoint(const api::Pod& pod);

}  // namespace strata::controller
