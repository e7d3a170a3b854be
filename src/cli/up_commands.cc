// `strata up`: run the control plane on this machine until SIGINT or SIGTERM.
#include <signal.h>
#include <unistd.h>

#include <climits>
#include <iostream>
#include <memory>

#include "cli/command_registry.h"
#include "server/control_loops.h"
#include "server/control_plane.h"
#include "server/service_token_ledger.h"

namespace strata::cli {
namespace {

// This binary's path, for engine-sim replicas.
std::string SelfPath() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "strata";
  return std::string(path, static_cast<size_t>(n));
}

void RunUp(const server::ControlPlaneOptions& options, server::ControlLoopsOptions loops,
           bool keep_pods) {
  // Block the stop signals before any thread starts, so that only sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // The gateway's token counts, per service, for the cost endpoint's cost per million tokens.
  auto tokens = std::make_shared<server::ServiceTokenLedger>();
  server::ControlPlaneOptions plane_options = options;
  plane_options.service_tokens = [tokens](Duration window) { return tokens->Over(window); };
  Result<std::unique_ptr<server::ControlPlane>> plane =
      server::ControlPlane::Start(plane_options, std::cout);
  if (!plane) {
    std::cerr << "strata up: " << plane.error().message() << "\n";
    SetExitCode(plane.error().code() == StatusCode::kInvalidArgument ? 2 : 1);
    return;
  }
  loops.strata_path = SelfPath();
  Result<server::RunningLoops> running =
      server::StartControlLoops(**plane, options.data_dir, loops, tokens, std::cout);
  if (!running) {
    std::cerr << "strata up: " << running.error().message() << "\n";
    SetExitCode(running.error().code() == StatusCode::kInvalidArgument ? 2 : 1);
    (*plane)->Stop();
    return;
  }
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::cout << "strata: stopping (signal " << signal_number << ")" << std::endl;
  (*plane)->Stop();
  server::StopControlLoops(*running, keep_pods);
  if (keep_pods) {
    std::cout << "strata: pods keep running (--keep-pods); the next strata up adopts them"
              << std::endl;
  }
}

}  // namespace

STRATA_REGISTER_COMMANDS("up", [](CLI::App& app) {
  auto options = std::make_shared<server::ControlPlaneOptions>();
  auto loops = std::make_shared<server::ControlLoopsOptions>();
  auto keep_pods = std::make_shared<bool>(false);
  options->version = STRATA_VERSION;
  CLI::App* up = app.add_subcommand(
      "up",
      "Run the control plane here: REST API, SQLite store, scheduler and controllers, the "
      "OpenAI-compatible gateway for the Services, and a node "
      "agent for this machine (a simulated GPU inventory when NVML is absent)");
  up->add_option("--data-dir", options->data_dir, "Where the store lives")->capture_default_str();
  up->add_option("--listen", options->listen,
                 "HOST:PORT for the API (port 0: any free port); off loopback needs --token-file")
      ->capture_default_str();
  up->add_option("--simulate", options->simulate,
                 "Simulated inventory NODESxGPUS:MODEL[,racks=R], e.g. 4x8:H100-80GB,racks=2 "
                 "(default: NVML, else that shape)");
  up->add_option("--join-token-file", options->join_token_file,
                 "Join tokens for node agents on other machines (strata agent --join-token), one "
                 "per line");
  up->add_option("--token-file", options->token_file,
                 "Bearer tokens accepted by the API, one per line");
  up->add_option("--price-table", options->price_table_file,
                 "Prices for cost: per GPU model per hour, CPU core-hour, memory GiB-hour "
                 "(YAML or JSON; default: public cloud list prices)");
  up->add_option("--nvml-library", options->nvml_library, "Where NVML is loaded from")
      ->capture_default_str();
  up->add_option("--first-master-port", loops->first_master_port,
                 "The rendezvous port (MASTER_PORT) of the first training job on an address; "
                 "later jobs there get the next free ones")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  up->add_option("--stop-grace", loops->stop_grace_seconds,
                 "Seconds a stopped pod's processes get between SIGTERM and SIGKILL")
      ->capture_default_str()
      ->check(CLI::Range(0, 3600));
  CLI::Option* gateway_listen =
      up->add_option("--gateway-listen", loops->gateway_listen,
                     "HOST:PORT of the OpenAI-compatible gateway serving the Services (port 0: "
                     "any free port; the default falls back to one when taken), or off")
          ->capture_default_str();
  up->add_option("--gateway-config", loops->gateway_config,
                 "Gateway tenants, limits and picker policy (YAML; no models: they come from the "
                 "Services)");
  up->add_option("--sim-startup-delay", loops->sim_startup_delay_seconds,
                 "Seconds a simulated engine takes to load its weights (simulated GPUs only)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  up->add_option("--gpu-activity-window", loops->gpu_activity_window_seconds,
                 "Seconds over which a pod's CPU use is measured to derive how busy it keeps "
                 "its simulated GPUs (one core per GPU: fully busy)")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 86400.0));
  up->add_option("--drain-grace", loops->drain_grace_seconds,
                 "Seconds a draining replica may keep streams open before it is stopped")
      ->capture_default_str()
      ->check(CLI::Range(0, 86400));
  up->add_flag("--keep-pods", *keep_pods,
               "Leave the pods' processes running when strata up stops (SIGINT, SIGTERM); the "
               "next strata up on this data dir adopts them. Default: they are stopped too");
  up->callback([options, loops, keep_pods, gateway_listen] {
    loops->gateway_listen_given = gateway_listen->count() > 0;
    RunUp(*options, *loops, *keep_pods);
  });
});

}  // namespace strata::cli
