#include "controller/training_pod.h"

#include <fmt/format.h>

#include <cstdlib>

#include "api/job_roles.h"

namespace strata::controller {

std::string JobPodName(std::string_view job_name, int64_t rank) {
  return fmt::format("{}-worker-{}", job_name, rank);
}

api::Pod MakeJobPod(const api::Job& job, const api::JobPlacement& placement,
                    const api::JobPodAssignment& assignment) {
  const std::vector<api::JobRole> roles = api::JobRoles(job.spec);
  // A spec edited since the placement was made may have fewer ranks: the placement's extra
  // ranks count in the last role.
  const api::RolePosition position =
      api::RoleOfRank(roles, assignment.rank)
          .value_or(api::RolePosition{roles.size() - 1,
                                      assignment.rank - api::FirstRank(roles, roles.size() - 1)});
  const api::JobRole& role = roles[position.role];
  const api::TorchWorld world = api::TorchWorldOf(roles, position);

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
  annotations[api::kNumNodesAnnotation] = std::to_string(world.num_nodes);
  annotations[api::kProcPerNodeAnnotation] = std::to_string(role.proc_per_node);
  if (!job.spec.roles.empty()) {
    // A job of one template is torchrun's one role, "default", ranked by its pods' ranks.
    annotations[api::kRoleAnnotation] = role.name;
    annotations[api::kRoleIndexAnnotation] = std::to_string(position.index);
    annotations[api::kRolePodsAnnotation] = std::to_string(role.replicas);
    annotations[api::kWorldSizeAnnotation] = std::to_string(world.world_size);
    annotations[api::kFirstWorkerRankAnnotation] = std::to_string(world.first_worker_rank);
  }
  annotations[api::kRestartCountAnnotation] = std::to_string(job.status.restart_count);
  annotations[api::kMaxRestartsAnnotation] = std::to_string(job.spec.max_restarts);
  if (!job.spec.checkpoint.dir.empty()) {
    annotations[api::kCheckpointDirAnnotation] = job.spec.checkpoint.dir;
  }
  if (!placement.flavor.empty()) annotations[api::kFlavorAnnotation] = placement.flavor;
  if (!placement.bound_at.empty()) annotations[api::kBoundAtAnnotation] = placement.bound_at;

  // The replica is the pod's node rank in its torchrun world; the rank counts across the job.
  pod.spec.owner =
      api::PodOwner{"Job", job.metadata.name, world.node_rank, assignment.rank, job.metadata.uid};
  pod.spec.queue = job.spec.queue;
  pod.spec.priority = job.spec.priority;
  pod.spec.restart_policy = "Never";
  // The pod of this rank has been restarted as often as its group (a liveness probe's kill
  // included): `get pods` shows it.
  pod.status.restart_count = job.status.restart_count;
  pod.spec.node_name = assignment.node_name;
  pod.spec.resources = role.resources;
  pod.spec.gpu_selector = job.spec.gpu_selector;
  pod.spec.tolerations = job.spec.tolerations;
  pod.spec.template_ = role.template_;
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
