#include "api/torchrun_env.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>

namespace strata::api {
namespace {

constexpr std::array<std::string_view, 22> kReservedNames = {
    "CUDA_VISIBLE_DEVICES",
    "GROUP_RANK",
    "JOB_COMPLETION_INDEX",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "PET_MASTER_ADDR",
    "PET_MASTER_PORT",
    "PET_NNODES",
    "PET_NODE_RANK",
    "PET_NPROC_PER_NODE",
    "RANK",
    "ROLE_NAME",
    "ROLE_RANK",
    "ROLE_WORLD_SIZE",
    "TORCHELASTIC_MAX_RESTARTS",
    "TORCHELASTIC_RESTART_COUNT",
    "TORCHELASTIC_RUN_ID",
    "VC_TASK_INDEX",
    "VK_TASK_INDEX",
    "WORLD_SIZE",
};
constexpr std::string_view kStrataPrefix = "STRATA_";

bool IsValidEnvName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
}

Status ValidatePod(const TrainingPod& pod) {
  auto bad = [](std::string message) { return InvalidArgumentError(std::move(message)); };
  if (pod.job_name.empty()) return bad("job_name is empty");
  if (pod.run_id.empty()) return bad("run_id is empty");
  if (pod.master_addr.empty()) return bad("master_addr is empty");
  if (pod.master_port < 1 || pod.master_port > 65535) {
    return bad(fmt::format("master_port {} is not in [1, 65535]", pod.master_port));
  }
  if (pod.num_nodes < 1) return bad(fmt::format("num_nodes {} is below 1", pod.num_nodes));
  if (pod.node_rank < 0 || pod.node_rank >= pod.num_nodes) {
    return bad(
        fmt::format("node_rank {} is not in [0, num_nodes {})", pod.node_rank, pod.num_nodes));
  }
  if (pod.proc_per_node < 1) {
    return bad(fmt::format("proc_per_node {} is below 1", pod.proc_per_node));
  }
  if (pod.role && (pod.role->index < 0 || pod.role->index >= pod.role->pods ||
                   pod.role->first_worker_rank < 0 ||
                   pod.role->first_worker_rank + pod.proc_per_node > pod.role->world_size)) {
    return bad(fmt::format("role {}: index {} of {} pods, first worker rank {} of world size {}",
                           pod.role->name, pod.role->index, pod.role->pods,
                           pod.role->first_worker_rank, pod.role->world_size));
  }
  if (pod.max_restarts < 0)
    return bad(fmt::format("max_restarts {} is negative", pod.max_restarts));
  if (pod.restart_count < 0 || pod.restart_count > pod.max_restarts) {
    return bad(fmt::format("restart_count {} is not in [0, max_restarts {}]", pod.restart_count,
                           pod.max_restarts));
  }
  std::set<int> seen_gpus;
  for (size_t i = 0; i < pod.gpu_indices.size(); ++i) {
    int gpu = pod.gpu_indices[i];
    if (gpu < 0) return bad(fmt::format("gpu_indices[{}] {} is negative", i, gpu));
    if (!seen_gpus.insert(gpu).second) {
      return bad(fmt::format("gpu_indices[{}] {} appears twice", i, gpu));
    }
  }
  if (pod.gpu_assignment == GpuAssignment::kOnePerWorker &&
      pod.gpu_indices.size() != static_cast<size_t>(pod.proc_per_node)) {
    return bad(fmt::format("one GPU per worker needs {} gpu_indices (proc_per_node), got {}",
                           pod.proc_per_node, pod.gpu_indices.size()));
  }
  std::set<std::string_view> seen_names;
  for (size_t i = 0; i < pod.user_env.size(); ++i) {
    const std::string& name = pod.user_env[i].first;
    if (!IsValidEnvName(name)) {
      return bad(fmt::format("env[{}].name \"{}\" is not a valid variable name", i, name));
    }
    if (IsReservedEnvName(name)) {
      return bad(fmt::format("env[{}].name \"{}\" is reserved (strata sets it)", i, name));
    }
    if (!seen_names.insert(name).second) {
      return bad(fmt::format("env[{}].name \"{}\" is set twice", i, name));
    }
    if (pod.user_env[i].second.find('\0') != std::string::npos) {
      return bad(fmt::format("env[{}].value of \"{}\" contains a NUL byte", i, name));
    }
  }
  return Status::Ok();
}

std::string JoinIndices(const std::vector<int>& indices) {
  return fmt::format("{}", fmt::join(indices, ","));
}

// What every process of the pod gets: the launcher's whole environment, and each worker's
// before its ranks are added.
Environment PodEnvironment(const TrainingPod& pod) {
  const int world_size = pod.role ? pod.role->world_size : pod.num_nodes * pod.proc_per_node;
  const int task_index = pod.role ? pod.role->index : pod.node_rank;
  Environment shared;
  for (const auto& [name, value] : pod.user_env) shared[name] = value;
  shared["MASTER_ADDR"] = pod.master_addr;
  shared["MASTER_PORT"] = std::to_string(pod.master_port);
  shared["WORLD_SIZE"] = std::to_string(world_size);
  shared["GROUP_RANK"] = std::to_string(pod.node_rank);
  // Kubernetes' Indexed Job contract: a batch/v1 Job's pods (a JobSet's child Job's: a role's)
  // find their index here.
  shared["JOB_COMPLETION_INDEX"] = std::to_string(task_index);
  // Volcano's env plugin contract: a batch.volcano.sh Job's pods find their index within their
  // task (strata's role) here.
  shared["VK_TASK_INDEX"] = std::to_string(task_index);
  shared["VC_TASK_INDEX"] = std::to_string(task_index);
  shared["ROLE_NAME"] = pod.role ? pod.role->name : "default";
  shared["LOCAL_WORLD_SIZE"] = std::to_string(pod.proc_per_node);
  shared["ROLE_WORLD_SIZE"] =
      std::to_string(pod.role ? pod.role->pods * pod.proc_per_node : world_size);
  shared["TORCHELASTIC_RESTART_COUNT"] = std::to_string(pod.restart_count);
  shared["TORCHELASTIC_MAX_RESTARTS"] = std::to_string(pod.max_restarts);
  shared["TORCHELASTIC_RUN_ID"] = pod.run_id;
  shared["PET_NNODES"] = std::to_string(pod.num_nodes);
  shared["PET_NPROC_PER_NODE"] = std::to_string(pod.proc_per_node);
  shared["PET_NODE_RANK"] = std::to_string(pod.node_rank);
  shared["PET_MASTER_ADDR"] = pod.master_addr;
  shared["PET_MASTER_PORT"] = std::to_string(pod.master_port);
  shared["STRATA_JOB_NAME"] = pod.job_name;
  if (!pod.checkpoint_dir.empty()) shared["STRATA_CHECKPOINT_DIR"] = pod.checkpoint_dir;
  shared["CUDA_VISIBLE_DEVICES"] = JoinIndices(pod.gpu_indices);
  return shared;
}

std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::span<const std::string_view> ReservedEnvNames() { return kReservedNames; }

bool IsReservedEnvName(std::string_view name) {
  return name.starts_with(kStrataPrefix) ||
         std::find(kReservedNames.begin(), kReservedNames.end(), name) != kReservedNames.end();
}

bool IsTorchrunLauncher(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  std::string_view program = BaseName(argv[0]);
  if (program == "torchrun") return true;
  return program.starts_with("python") && argv.size() >= 3 && argv[1] == "-m" &&
         argv[2] == "torch.distributed.run";
}

Result<Environment> BuildLauncherEnvironment(const TrainingPod& pod) {
  RETURN_IF_ERROR(ValidatePod(pod));
  if (pod.gpu_assignment == GpuAssignment::kOnePerWorker) {
    return Err(InvalidArgumentError(
        "one GPU per worker needs strata to start the workers, not a launcher"));
  }
  return PodEnvironment(pod);
}

Result<std::vector<Environment>> BuildWorkerEnvironments(const TrainingPod& pod) {
  RETURN_IF_ERROR(ValidatePod(pod));
  const Environment shared = PodEnvironment(pod);
  std::vector<Environment> workers;
  workers.reserve(pod.proc_per_node);
  for (int local_rank = 0; local_rank < pod.proc_per_node; ++local_rank) {
    Environment env = shared;
    const int first = pod.role ? pod.role->first_worker_rank : pod.node_rank * pod.proc_per_node;
    env["RANK"] = std::to_string(first + local_rank);
    // torchrun's rank within the role; with one role, the global rank.
    const int role_index = pod.role ? pod.role->index : pod.node_rank;
    env["ROLE_RANK"] = std::to_string(role_index * pod.proc_per_node + local_rank);
    env["LOCAL_RANK"] = std::to_string(local_rank);
    if (pod.gpu_assignment == GpuAssignment::kOnePerWorker) {
      env["CUDA_VISIBLE_DEVICES"] = std::to_string(pod.gpu_indices[local_rank]);
    }
    workers.push_back(std::move(env));
  }
  return workers;
}

}  // namespace strata::api
