#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/node.h"
#include "api/pod.h"
#include "api/pod_contract.h"
#include "api/torchrun_env.h"
#include "common/clock.h"
#include "common/status.h"

// How the node agent starts the engine of one Service replica pod: its port, its environment
// (KServe's and LeaderWorkerSet's contract, its GPU memory share), its command line
// (Kubernetes' $(VAR) expansion, vLLM's flags) and, on simulated GPUs, `strata engine-sim` in
// place of the real engine. Pure functions; thread-safe.
namespace strata::node {

// Runs `strata engine-sim` in place of a replica's real engine (vLLM, a KServe runtime...): what
// a node with simulated GPUs does, since no real engine can load weights there.
struct EngineSimSubstitution {
  std::string strata_path;   // the strata binary
  Duration startup_delay{};  // engine-sim's --startup-delay: the weights "load" this long
  std::string profile;       // engine-sim's --profile; empty: its default
  double time_scale = 1.0;   // engine-sim's --time-scale
};

// Everything a replica pod's engine is started from, besides the agent's base environment.
struct ReplicaLaunchInput {
  api::ReplicaPod replica;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<api::EnvVar> user_env;  // the template's, in manifest order
  int port = 0;                       // the engine's port (api::kEnginePortAnnotation)
  // The address the engine must accept connections on from other machines; a loopback address
  // keeps a substituted engine-sim on 127.0.0.1.
  std::string node_address;
  double gpu_memory_fraction = 1.0;  // GpuMemoryFraction
  std::optional<EngineSimSubstitution> engine_sim;
};

// The replica's one process, ready for the runtime.
struct ReplicaLaunch {
  std::vector<std::string> argv;
  api::Environment env;  // base environment included
  // Non-empty when engine-sim runs in place of the template's engine: that engine's name
  // ("vllm", "huggingfaceserver").
  std::string replaced_engine;
};

// Builds the replica's process:
//  - env: the base environment, the user's variables, then STRATA_PORT and PORT (the port),
//    STRATA_GPU_MEMORY_FRACTION, and for a group of several pods (or any LeaderWorkerSet's
//    pod) LeaderWorkerSet's LWS_LEADER_ADDRESS, LWS_GROUP_SIZE and LWS_WORKER_INDEX (= the
//    pod's rank);
//  - argv: command then args, each `$(NAME)` replaced by NAME's value in that environment
//    (Kubernetes' rule: an unknown name stays as written; `$$` is a literal `$`), then
//    `--port <port>` unless the command line already says `--port` or refers to $(STRATA_PORT)
//    or $(PORT); for vLLM (`vllm ...` or `python -m vllm.entrypoints...`)
//    `--gpu-memory-utilization=<engine::GpuMemoryUtilizationForShare>` unless the args set it;
//  - with engine_sim set, any engine but `strata engine-sim` is replaced by
//    `<strata> engine-sim --model <served model> --port <port> --startup-delay <d>
//    [--profile p] [--time-scale s] [--host 0.0.0.0]` (host only for a non-loopback node
//    address); a template running `strata engine-sim` is kept, with `strata` resolved to
//    engine_sim->strata_path.
// Returns InvalidArgument naming the field when a user variable is reserved
// (IsReservedReplicaEnvName), the command is empty, or engine-sim must stand in for a replica
// without a served model.
Result<ReplicaLaunch> BuildReplicaLaunch(const ReplicaLaunchInput& input,
                                         const api::Environment& base_env);

// `base` plus the template's variables `env`. Returns InvalidArgument naming the variable
// ("spec.template.env[1].name \"PORT\" is reserved (strata sets it)") when `reserved` says
// strata sets it.
Result<api::Environment> TemplateEnvironment(const api::Environment& base,
                                             const std::vector<api::EnvVar>& env,
                                             bool (*reserved)(std::string_view name));

// The names strata sets in a replica's environment and users may not: api::IsReservedEnvName's,
// PORT and LeaderWorkerSet's LWS_*.
bool IsReservedReplicaEnvName(std::string_view name);

// The share of its GPUs' memory a pod may use: for a fractional GPU with reserved memory, that
// memory over the GPU's total (from `node`, when it lists the GPU); else its share (milli-GPUs
// / 1000); 1 for whole GPUs. The smallest over the pod's GPUs; 1 without GPUs.
double GpuMemoryFraction(const std::vector<api::AssignedGpu>& gpus, const api::Node* node);

// A fraction with at most 3 decimals and no trailing zeros ("1.0", "0.5", "0.333").
std::string FormatFraction(double fraction);

}  // namespace strata::node
