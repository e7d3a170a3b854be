// `strata engine-sim`: one simulated vLLM replica behind a real HTTP server.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <iostream>

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
};

int RunEngineSim(const EngineSimFlags& flags) {
  Result<engine::EngineProfile> profile = engine::ProfileByName(flags.profile);
  if (!profile) {
    std::cerr << "--profile: " << profile.error().message() << "\n";
    return 2;
  }
  Result<Duration> startup_delay = ParseDuration(flags.startup_delay, "--startup-delay");
  if (!startup_delay) {
    std::cerr << startup_delay.error().message() << "\n";
    return 2;
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
  command->callback([flags] { SetExitCode(RunEngineSim(*flags)); });
});

}  // namespace strata::cli
