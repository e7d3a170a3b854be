// `strata engine-sim`: one simulated vLLM replica behind a real HTTP server.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "cli/command_registry.h"
#include "common/clock.h"
#include "engine/engine_server.h"

namespace strata::cli {
namespace {

// "250ms", "5s", "2m" or a plain number of seconds.
Result<Duration> ParseDuration(std::string_view text, std::string_view flag) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view unit(end, text.data() + text.size() - end);
  double seconds_per_unit = unit == "ms" ? 1e-3 : unit == "m" ? 60 : 1;
  if (ec != std::errc() || value < 0 ||
      !(unit.empty() || unit == "s" || unit == "ms" || unit == "m")) {
    return Err(InvalidArgumentError(std::string(flag) + ": \"" + std::string(text) +
                                    "\" is not a duration like 500ms, 5s or 2m"));
  }
  return Duration(static_cast<int64_t>(value * seconds_per_unit * 1e9));
}

struct EngineSimFlags {
  std::string host = "127.0.0.1";
  int port = 8000;
  std::string model;
  std::string profile = "8b-h100";
  int max_num_seqs = 256;
  int kv_blocks = 0;
  int block_size = 0;
  double kv_offload_gib = 0;
  std::string startup_delay = "0s";
  std::vector<std::string> loras;
  double time_scale = 1.0;
  std::optional<double> gpu_memory_utilization;
  std::string drain_timeout = "30s";
};

// vLLM's --gpu-memory-utilization when the flag is not given: its default 0.9 of the share of
// the GPU the node agent gave this replica (STRATA_GPU_MEMORY_FRACTION), or of the whole GPU.
Result<double> GpuMemoryUtilization(const EngineSimFlags& flags) {
  if (flags.gpu_memory_utilization) return *flags.gpu_memory_utilization;
  const char* share = std::getenv("STRATA_GPU_MEMORY_FRACTION");
  if (share == nullptr) return engine::kDefaultGpuMemoryUtilization;
  std::string_view text(share);
  double fraction = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), fraction);
  if (ec != std::errc() || end != text.data() + text.size() || !(fraction > 0 && fraction <= 1)) {
    return Err(InvalidArgumentError("STRATA_GPU_MEMORY_FRACTION: \"" + std::string(text) +
                                    "\" is not a fraction in (0, 1]"));
  }
  return engine::GpuMemoryUtilizationForShare(fraction);
}

int RunEngineSim(const EngineSimFlags& flags) {
  Result<engine::EngineProfile> profile = engine::ProfileByName(flags.profile);
  if (!profile) {
    std::cerr << "--profile: " << profile.error().message() << "\n";
    return 2;
  }
  Result<Duration> startup_delay = ParseDuration(flags.startup_delay, "--startup-delay");
  Result<Duration> drain_timeout = ParseDuration(flags.drain_timeout, "--drain-timeout");
  Result<double> utilization = GpuMemoryUtilization(flags);
  for (const Status& bad : {startup_delay ? Status::Ok() : startup_delay.error(),
                            drain_timeout ? Status::Ok() : drain_timeout.error(),
                            utilization ? Status::Ok() : utilization.error()}) {
    if (!bad.ok()) {
      std::cerr << bad.message() << "\n";
      return 2;
    }
  }
  engine::EngineServerOptions options;
  options.host = flags.host;
  options.port = flags.port;
  options.model = flags.model;
  options.engine.profile = *profile;
  options.engine.max_num_seqs = flags.max_num_seqs;
  options.engine.num_kv_blocks = flags.kv_blocks;
  options.engine.block_size = flags.block_size;
  options.engine.cpu_offload_blocks =
      profile->HostBlocksIn(flags.kv_offload_gib, options.engine.block_size);
  options.engine.lora_adapters = flags.loras;
  options.startup_delay = *startup_delay;
  options.time_scale = flags.time_scale;
  options.gpu_memory_utilization = *utilization;

  // Signals are taken by sigwait below, so the server threads must inherit them blocked.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  engine::EngineServer server(options, RealClock::Instance());
  Status started = server.Start();
  if (!started.ok()) {
    std::cerr << "engine-sim: " << started.message() << "\n";
    return started.code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  std::cout << "listening on " << flags.host << ":" << server.port() << std::endl;
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  // A drained pod gets SIGTERM: the requests in progress finish, new ones get 503.
  std::cout << "draining (up to " << flags.drain_timeout << ")" << std::endl;
  server.BeginDrain();
  if (!server.WaitDrained(*drain_timeout)) {
    std::cout << "drain timeout passed; closing the requests still in progress" << std::endl;
  }
  server.Stop();
  return 0;
}

}  // namespace

STRATA_REGISTER_COMMANDS("engine", [](CLI::App& app) {
  auto flags = std::make_shared<EngineSimFlags>();
  CLI::App* command =
      app.add_subcommand("engine-sim", "Run a simulated vLLM replica (OpenAI API, vLLM metrics)");
  command->add_option("--host", flags->host, "Address to bind");
  command->add_option("--port", flags->port, "Port to bind; 0 picks a free one")
      ->check(CLI::Range(0, 65535));
  command->add_option("--model", flags->model, "Served model name")->required();
  command->add_option("--profile", flags->profile, "Latency profile (8b-h100)");
  command->add_option("--max-num-seqs", flags->max_num_seqs, "Most sequences in a batch")
      ->check(CLI::PositiveNumber);
  command->add_option("--kv-blocks", flags->kv_blocks, "KV-cache blocks (default: the profile's)")
      ->check(CLI::PositiveNumber);
  command->add_option("--block-size", flags->block_size, "Tokens per KV block (default: 16)")
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--kv-offload-gib", flags->kv_offload_gib,
                   "Host memory for a CPU KV-offload tier, in GiB (default 0: none)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--startup-delay", flags->startup_delay,
                      "Time before /health turns 200, e.g. 30s");
  command->add_option("--lora", flags->loras, "LoRA adapters loaded, e.g. sql,chat")
      ->delimiter(',');
  command
      ->add_option("--time-scale", flags->time_scale,
                   "Simulated time runs this many times faster; 0: no latency")
      ->check(CLI::NonNegativeNumber);
  command
      ->add_option("--gpu-memory-utilization", flags->gpu_memory_utilization,
                   "Share of the GPU's memory to use; sizes the KV cache (default: 0.9 of "
                   "STRATA_GPU_MEMORY_FRACTION, else 0.9)")
      ->check(CLI::Range(0.0, 1.0));
  command->add_option("--drain-timeout", flags->drain_timeout,
                      "On SIGTERM, how long requests in progress may take to finish (default 30s)");
  command->callback([flags] { SetExitCode(RunEngineSim(*flags)); });
});

}  // namespace strata::cli
