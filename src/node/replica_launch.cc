#include "node/replica_launch.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>

#include "engine/profile.h"
#include "node/env_references.h"

namespace strata::node {
namespace {

constexpr std::array<std::string_view, 4> kReplicaNames = {"PORT", "LWS_LEADER_ADDRESS",
                                                           "LWS_GROUP_SIZE", "LWS_WORKER_INDEX"};

std::string_view Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The module a `python -m MODULE ...` command line runs, or empty.
std::string_view PythonModule(const std::vector<std::string>& argv) {
  if (argv.size() < 3 || !Basename(argv[0]).starts_with("python") || argv[1] != "-m") return "";
  return argv[2];
}

bool IsVllm(const std::vector<std::string>& argv) {
  return !argv.empty() &&
         (Basename(argv[0]) == "vllm" || PythonModule(argv).starts_with("vllm.entrypoints"));
}

bool IsEngineSim(const std::vector<std::string>& argv) {
  return argv.size() >= 2 && Basename(argv[0]) == "strata" && argv[1] == "engine-sim";
}

// What the command line runs, in the words of its user: "vllm", a Python module, or the
// program's name.
std::string EngineName(const std::vector<std::string>& argv) {
  if (IsVllm(argv)) return "vllm";
  std::string_view module = PythonModule(argv);
  return std::string(module.empty() ? Basename(argv[0]) : module);
}

// Whether `argv` sets the flag `name` ("--name value" or "--name=value").
bool SetsFlag(const std::vector<std::string>& argv, std::string_view name) {
  return std::any_of(argv.begin(), argv.end(), [name](const std::string& arg) {
    return arg == name ||
           (arg.starts_with(name) && arg.size() > name.size() && arg[name.size()] == '=');
  });
}

bool IsLoopback(std::string_view address) {
  return address == "localhost" || address == "::1" || address.starts_with("127.");
}

std::string FormatDelay(Duration delay) {
  return fmt::format("{}ms", std::chrono::duration_cast<std::chrono::milliseconds>(delay).count());
}

Result<api::Environment> ReplicaEnvironment(const ReplicaLaunchInput& input,
                                            const api::Environment& base_env) {
  ASSIGN_OR_RETURN(api::Environment env,
                   TemplateEnvironment(base_env, input.user_env, IsReservedReplicaEnvName));
  const std::string port = std::to_string(input.port);
  env["STRATA_PORT"] = port;
  env["PORT"] = port;
  env["STRATA_GPU_MEMORY_FRACTION"] = FormatFraction(input.gpu_memory_fraction);
  if (input.replica.group_size > 1 || input.replica.leader_worker_set) {
    env["LWS_LEADER_ADDRESS"] = input.replica.leader_address;
    env["LWS_GROUP_SIZE"] = std::to_string(input.replica.group_size);
    env["LWS_WORKER_INDEX"] = std::to_string(input.replica.rank);
  }
  return env;
}

std::vector<std::string> EngineSimArgv(const ReplicaLaunchInput& input) {
  const EngineSimSubstitution& sim = *input.engine_sim;
  std::vector<std::string> argv = {sim.strata_path,   "engine-sim",
                                   "--model",         input.replica.served_model,
                                   "--port",          std::to_string(input.port),
                                   "--startup-delay", FormatDelay(sim.startup_delay)};
  if (!sim.profile.empty()) argv.insert(argv.end(), {"--profile", sim.profile});
  if (sim.time_scale != 1.0)
    argv.insert(argv.end(), {"--time-scale", fmt::format("{}", sim.time_scale)});
  if (!IsLoopback(input.node_address)) argv.insert(argv.end(), {"--host", "0.0.0.0"});
  return argv;
}

}  // namespace

Result<api::Environment> TemplateEnvironment(const api::Environment& base,
                                             const std::vector<api::EnvVar>& env,
                                             bool (*reserved)(std::string_view name)) {
  api::Environment out = base;
  for (size_t i = 0; i < env.size(); ++i) {
    if (reserved(env[i].name)) {
      return Err(InvalidArgumentError(fmt::format(
          "spec.template.env[{}].name \"{}\" is reserved (strata sets it)", i, env[i].name)));
    }
    out[env[i].name] = env[i].value;
  }
  return out;
}

bool IsReservedReplicaEnvName(std::string_view name) {
  return api::IsReservedEnvName(name) ||
         std::find(kReplicaNames.begin(), kReplicaNames.end(), name) != kReplicaNames.end();
}

double GpuMemoryFraction(const std::vector<api::AssignedGpu>& gpus, const api::Node* node) {
  double smallest = 1.0;
  for (const api::AssignedGpu& gpu : gpus) {
    double fraction = static_cast<double>(gpu.share.milli()) / 1000.0;
    if (!gpu.memory.IsZero() && node != nullptr) {
      for (const api::NodeGpu& listed : node->status.gpus) {
        if (listed.index == gpu.index && !listed.memory.IsZero()) {
          fraction =
              static_cast<double>(gpu.memory.milli()) / static_cast<double>(listed.memory.milli());
        }
      }
    }
    smallest = std::min(smallest, fraction);
  }
  return smallest;
}

std::string FormatFraction(double fraction) {
  std::string text = fmt::format("{:.3f}", fraction);
  while (text.back() == '0' && text[text.size() - 2] != '.') text.pop_back();
  return text;
}

Result<ReplicaLaunch> BuildReplicaLaunch(const ReplicaLaunchInput& input,
                                         const api::Environment& base_env) {
  std::vector<std::string> written = input.command;
  written.insert(written.end(), input.args.begin(), input.args.end());
  if (written.empty()) {
    return Err(InvalidArgumentError("spec.template.command: a replica needs a command"));
  }
  ReplicaLaunch launch;
  ASSIGN_OR_RETURN(launch.env, ReplicaEnvironment(input, base_env));
  if (input.engine_sim && !IsEngineSim(written)) {
    if (input.replica.served_model.empty()) {
      return Err(InvalidArgumentError(
          fmt::format("metadata.annotations[{}]: missing (engine-sim needs the model to serve)",
                      api::kServedModelAnnotation)));
    }
    launch.replaced_engine = EngineName(written);
    launch.argv = EngineSimArgv(input);
    return launch;
  }
  std::set<std::string> referenced;
  for (const std::string& arg : written) {
    launch.argv.push_back(ExpandEnvReferences(arg, launch.env, &referenced));
  }
  if (input.engine_sim && launch.argv[0] == "strata")
    launch.argv[0] = input.engine_sim->strata_path;
  if (!SetsFlag(written, "--port") && referenced.count("STRATA_PORT") == 0 &&
      referenced.count("PORT") == 0) {
    launch.argv.insert(launch.argv.end(), {"--port", std::to_string(input.port)});
  }
  if (IsVllm(written) && !SetsFlag(written, "--gpu-memory-utilization")) {
    launch.argv.push_back(
        "--gpu-memory-utilization=" +
        FormatFraction(engine::GpuMemoryUtilizationForShare(input.gpu_memory_fraction)));
  }
  return launch;
}

}  // namespace strata::node
