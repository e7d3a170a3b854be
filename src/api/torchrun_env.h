#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace strata::api {

// A process environment: name -> value, sorted by name.
using Environment = std::map<std::string, std::string>;

// How a training pod's GPUs are shown to its workers.
enum class GpuAssignment {
  // torchrun's behaviour: every worker sees all of the pod's GPUs in CUDA_VISIBLE_DEVICES and
  // picks its own with LOCAL_RANK (torch.cuda.set_device(LOCAL_RANK)). The default.
  kAllToEachWorker,
  // Worker i sees only the pod's i-th GPU (as device 0 inside the worker). Stricter isolation,
  // but code that calls set_device(LOCAL_RANK) breaks for LOCAL_RANK > 0.
  kOnePerWorker,
};

// What the node agent knows about one pod of a training job when it starts its workers.
struct TrainingPod {
  std::string job_name;
  std::string run_id;  // TORCHELASTIC_RUN_ID; the same for every pod of one job run
  std::string master_addr;
  int master_port = 0;
  int num_nodes = 0;      // pods in the job (torchrun's --nnodes)
  int node_rank = 0;      // this pod's index in [0, num_nodes)
  int proc_per_node = 0;  // workers in this pod (torchrun's --nproc-per-node)
  int restart_count = 0;  // how many times the job's group has been restarted so far
  int max_restarts = 0;
  std::vector<int> gpu_indices;  // the pod's assigned GPUs, as CUDA_VISIBLE_DEVICES indices
  GpuAssignment gpu_assignment = GpuAssignment::kAllToEachWorker;
  // Where the pod stands among the job's roles; absent: the job has one role ("default") and
  // every pod runs proc_per_node workers.
  struct Role {
    std::string name;
    int index = 0;              // among the role's pods (VK_TASK_INDEX)
    int pods = 0;               // of the role
    int world_size = 0;         // workers of the whole job (WORLD_SIZE)
    int first_worker_rank = 0;  // RANK of this pod's LOCAL_RANK 0
  };
  std::optional<Role> role;
  std::string checkpoint_dir;                                 // empty: the job does not checkpoint
  std::vector<std::pair<std::string, std::string>> user_env;  // in manifest order
};

// The names strata sets itself and users may not: torchrun's contract, Kubeflow's PET_*
// aliases, CUDA_VISIBLE_DEVICES, and every STRATA_* name.
std::span<const std::string_view> ReservedEnvNames();
bool IsReservedEnvName(std::string_view name);

// Builds the environment of each of the pod's proc_per_node workers (index = LOCAL_RANK):
// exactly torchrun's variables (MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK,
// GROUP_RANK, ROLE_RANK, ROLE_NAME, LOCAL_WORLD_SIZE, ROLE_WORLD_SIZE,
// TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID), Kubeflow's
// PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT,
// CUDA_VISIBLE_DEVICES (per gpu_assignment), STRATA_JOB_NAME, STRATA_CHECKPOINT_DIR (when set),
// and the user's variables. A pure function.
//
// Returns InvalidArgument naming the field when the pod is inconsistent (e.g. "node_rank 2 is
// not below num_nodes 2") or a user variable is reserved, malformed or repeated
// ("env[1].name \"RANK\" is reserved").
Result<std::vector<Environment>> BuildWorkerEnvironments(const TrainingPod& pod);

// Whether `argv` runs torchrun itself (`torchrun ...`, `/path/to/torchrun ...`, `python[3] -m
// torch.distributed.run ...`): the launcher form, where the pod runs that one process and
// torchrun starts the pod's workers and gives them their ranks, instead of strata starting
// proc_per_node workers. A pure function.
bool IsTorchrunLauncher(const std::vector<std::string>& argv);

// Builds the environment of a pod's one launcher process: what BuildWorkerEnvironments gives
// every worker of the pod, less the per-worker RANK, ROLE_RANK and LOCAL_RANK, with all of the
// pod's GPUs in CUDA_VISIBLE_DEVICES. torchrun takes PET_NNODES, PET_NPROC_PER_NODE,
// PET_NODE_RANK, PET_MASTER_ADDR and PET_MASTER_PORT as its flags' defaults, and MASTER_ADDR and
// MASTER_PORT are there for a command line's `--rdzv-endpoint $(MASTER_ADDR):$(MASTER_PORT)`.
// A pure function.
//
// Returns InvalidArgument as BuildWorkerEnvironments does, and when the pod asks for one GPU
// per worker (only strata's own workers can be given that).
Result<Environment> BuildLauncherEnvironment(const TrainingPod& pod);

}  // namespace strata::api
