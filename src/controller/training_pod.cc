#include "controller/training_pod.h"

#include <fmt/format.h>

#include "controller/stored_objects.h"

namespace strata::controller {

std::string JobPodName(std::string_view job_name, int64_t rank) {
  return fmt::format("{}-worker-{}", job_name, rank);
}

api::Pod MakeJobPod(const api::Job& job, const JobRun& run, const JobPodPlacement& placement) {
  api::Pod pod;
  pod.metadata.name = JobPodName(job.metadata.name, placement.rank);
  pod.metadata.namespace_name = job.metadata.namespace_name;
  pod.metadata.labels = job.metadata.labels;
  pod.metadata.labels[kJobNameLabel] = job.metadata.name;
  auto& annotations = pod.metadata.annotations;
  annotations[kRunIdAnnotation] = run.run_id;
  annotations[kMasterAddrAnnotation] = run.master_addr;
  annotations[kMasterPortAnnotation] = std::to_string(run.master_port);
  annotations[kNumNodesAnnotation] = std::to_string(job.spec.replicas);
  annotations[kProcPerNodeAnnotation] = std::to_string(job.spec.proc_per_node);
  annotations[kRestartCountAnnotation] = std::to_string(run.restart_count);
  annotations[kMaxRestartsAnnotation] = std::to_string(job.spec.max_restarts);
  if (!job.spec.checkpoint.dir.empty()) {
    annotations[kCheckpointDirAnnotation] = job.spec.checkpoint.dir;
  }
  if (!placement.flavor.empty()) annotations[kFlavorAnnotation] = placement.flavor;

  pod.spec.owner = api::PodOwner{"Job", job.metadata.name, placement.rank, placement.rank};
  pod.spec.queue = job.spec.queue;
  pod.spec.priority = job.spec.priority;
  pod.spec.restart_policy = "Never";
  pod.spec.node_name = placement.node_name;
  pod.spec.resources = job.spec.resources;
  pod.spec.gpu_selector = job.spec.gpu_selector;
  pod.spec.tolerations = job.spec.tolerations;
  pod.spec.template_ = job.spec.template_;
  pod.spec.assigned_gpus = placement.gpus;
  return pod;
}

bool RequestStop(api::Pod& pod, std::string_view reason, std::string_view message) {
  if (!StopRequested(pod).empty()) return false;
  pod.metadata.annotations[kStopRequestedAnnotation] = std::string(reason);
  pod.metadata.annotations[kStopMessageAnnotation] = std::string(message);
  return true;
}

std::optional<TimePoint> PodLastCheckpoint(const api::Pod& pod) {
  const std::string* text = node::PodAnnotation(pod, kLastCheckpointAnnotation);
  if (text == nullptr) return std::nullopt;
  return ParseRfc3339(*text);
}

}  // namespace strata::controller
