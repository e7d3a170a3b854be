#include "controller/training_pod.h"

#include <fmt/format.h>

#include <charconv>

#include "controller/stored_objects.h"

namespace strata::controller {
namespace {

const std::string* Annotation(const api::Pod& pod, const char* key) {
  auto it = pod.metadata.annotations.find(key);
  return it == pod.metadata.annotations.end() ? nullptr : &it->second;
}

Result<int64_t> IntegerAnnotation(const api::Pod& pod, const char* key) {
  const std::string* text = Annotation(pod, key);
  if (text == nullptr) {
    return Err(InvalidArgumentError(fmt::format("metadata.annotations[{}]: missing", key)));
  }
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size()) {
    return Err(InvalidArgumentError(
        fmt::format("metadata.annotations[{}]: expected an integer, got \"{}\"", key, *text)));
  }
  return value;
}

}  // namespace

std::string NodeAddress(const api::Node& node) {
  auto address = node.metadata.annotations.find(kAddressAnnotation);
  if (address != node.metadata.annotations.end() && !address->second.empty()) {
    return address->second;
  }
  auto hostname = node.metadata.labels.find("kubernetes.io/hostname");
  if (hostname != node.metadata.labels.end() && !hostname->second.empty()) {
    return hostname->second;
  }
  return node.metadata.name;
}

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

Result<node::TrainingPod> TrainingPodFromPod(const api::Pod& pod) {
  if (pod.spec.owner.kind != "Job") {
    return Err(
        InvalidArgumentError("spec.owner.kind: expected Job, got \"" + pod.spec.owner.kind + "\""));
  }
  node::TrainingPod out;
  out.job_name = pod.spec.owner.name;
  const std::string* run_id = Annotation(pod, kRunIdAnnotation);
  const std::string* master_addr = Annotation(pod, kMasterAddrAnnotation);
  if (run_id == nullptr || master_addr == nullptr) {
    return Err(InvalidArgumentError(
        fmt::format("metadata.annotations[{}]: missing",
                    run_id == nullptr ? kRunIdAnnotation : kMasterAddrAnnotation)));
  }
  out.run_id = *run_id;
  out.master_addr = *master_addr;
  ASSIGN_OR_RETURN(int64_t port, IntegerAnnotation(pod, kMasterPortAnnotation));
  ASSIGN_OR_RETURN(int64_t nodes, IntegerAnnotation(pod, kNumNodesAnnotation));
  ASSIGN_OR_RETURN(int64_t procs, IntegerAnnotation(pod, kProcPerNodeAnnotation));
  ASSIGN_OR_RETURN(int64_t restarts, IntegerAnnotation(pod, kRestartCountAnnotation));
  ASSIGN_OR_RETURN(int64_t max_restarts, IntegerAnnotation(pod, kMaxRestartsAnnotation));
  out.master_port = static_cast<int>(port);
  out.num_nodes = static_cast<int>(nodes);
  out.node_rank = static_cast<int>(pod.spec.owner.replica);
  out.proc_per_node = static_cast<int>(procs);
  out.restart_count = static_cast<int>(restarts);
  out.max_restarts = static_cast<int>(max_restarts);
  for (const api::AssignedGpu& gpu : pod.spec.assigned_gpus) {
    out.gpu_indices.push_back(static_cast<int>(gpu.index));
  }
  if (const std::string* dir = Annotation(pod, kCheckpointDirAnnotation)) {
    out.checkpoint_dir = *dir;
  }
  for (const api::EnvVar& env : pod.spec.template_.env)
    out.user_env.emplace_back(env.name, env.value);
  return out;
}

bool PodTerminal(const api::Pod& pod) {
  return pod.status.phase == "Succeeded" || pod.status.phase == "Failed";
}

std::string StopRequested(const api::Pod& pod) {
  const std::string* reason = Annotation(pod, kStopRequestedAnnotation);
  return reason == nullptr ? std::string() : *reason;
}

bool RequestStop(api::Pod& pod, std::string_view reason, std::string_view message) {
  if (!StopRequested(pod).empty()) return false;
  pod.metadata.annotations[kStopRequestedAnnotation] = std::string(reason);
  pod.metadata.annotations[kStopMessageAnnotation] = std::string(message);
  return true;
}

std::optional<TimePoint> PodLastCheckpoint(const api::Pod& pod) {
  const std::string* text = Annotation(pod, kLastCheckpointAnnotation);
  if (text == nullptr) return std::nullopt;
  return ParseRfc3339(*text);
}

}  // namespace strata::controller
