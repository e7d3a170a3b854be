#include "controller/training_pod.h"

#include <fmt/format.h>

#include <cstdlib>

namespace strata::controller {

std::string JobPodName(std::string_view job_name, int64_t rank) {
  return fmt::format("{}-worker-{}", job_name, rank);
}

api::Pod MakeJobPod(const api::Job& job, const api::JobPlacement& placement,
                    const api::JobPodAssignment& assignment) {
  api::Pod pod;
  pod.metadata.name = JobPodName(job.metadata.name, assignment.rank);
  pod.metadata.namespace_name = job.metadata.namespace_name;
  pod.metadata.labels = job.metadata.labels;
  pod.metadata.labels[api::kJobNameLabel] = job.metadata.name;
  auto& annotations = pod.metadata.annotations;
  annotations[api::kJobRunAnnotation] = std::to_string(placement.run);
  annotations[api::kRunIdAnnotation] = job.metadata.uid;
  annotations[api::kMasterAddrAnnotation] = placement.master_addr;
  annotations[api::kMasterPortAnnotation] = std::to_string(placement.master_port);
  annotations[api::kNumNodesAnnotation] = std::to_string(job.spec.replicas);
  annotations[api::kProcPerNodeAnnotation] = std::to_string(job.spec.proc_per_node);
  annotations[api::kRestartCountAnnotation] = std::to_string(job.status.restart_count);
  annotations[api::kMaxRestartsAnnotation] = std::to_string(job.spec.max_restarts);
  if (!job.spec.checkpoint.dir.empty()) {
    annotations[api::kCheckpointDirAnnotation] = job.spec.checkpoint.dir;
  }
  if (!placement.flavor.empty()) annotations[api::kFlavorAnnotation] = placement.flavor;
  if (!placement.bound_at.empty()) annotations[api::kBoundAtAnnotation] = placement.bound_at;

  pod.spec.owner = api::PodOwner{"Job", job.metadata.name, assignment.rank, assignment.rank};
  pod.spec.queue = job.spec.queue;
  pod.spec.priority = job.spec.priority;
  pod.spec.restart_policy = "Never";
  // The pod of this rank has been restarted as often as its group (a liveness probe's kill
  // included): `get pods` shows it.
  pod.status.restart_count = job.status.restart_count;
  pod.spec.node_name = assignment.node_name;
  pod.spec.resources = job.spec.resources;
  pod.spec.gpu_selector = job.spec.gpu_selector;
  pod.spec.tolerations = job.spec.tolerations;
  pod.spec.template_ = job.spec.template_;
  pod.spec.assigned_gpus = assignment.gpus;
  return pod;
}

int64_t PodJobRun(const api::Pod& pod) {
  const std::string* run = api::PodAnnotation(pod, api::kJobRunAnnotation);
  return run == nullptr ? 0 : std::atoll(run->c_str());
}

bool RequestStop(api::Pod& pod, std::string_view reason, std::string_view message) {
  if (!api::StopRequested(pod).empty()) return false;
  pod.metadata.annotations[api::kStopRequestedAnnotation] = std::string(reason);
  pod.metadata.annotations[api::kStopMessageAnnotation] = std::string(message);
  return true;
}

std::optional<TimePoint> PodLastCheckpoint(const api::Pod& pod) {
  const std::string* text = api::PodAnnotation(pod, api::kLastCheckpointAnnotation);
  if (text == nullptr) return std::nullopt;
  return ParseRfc3339(*text);
}

}  // namespace strata::controller
