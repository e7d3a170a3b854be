// `strata up`: run the control plane on this machine until SIGINT or SIGTERM.
#include <signal.h>

#include <iostream>
#include <memory>

#include "cli/command_registry.h"
#include "server/control_plane.h"

namespace strata::cli {
namespace {

void RunUp(const server::ControlPlaneOptions& options) {
  // Block the stop signals before any thread starts, so that only sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  Result<std::unique_ptr<server::ControlPlane>> plane =
      server::ControlPlane::Start(options, std::cout);
  if (!plane) {
    std::cerr << "strata up: " << plane.error().message() << "\n";
    SetExitCode(plane.error().code() == StatusCode::kInvalidArgument ? 2 : 1);
    return;
  }
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::cout << "strata: stopping (signal " << signal_number << ")" << std::endl;
  (*plane)->Stop();
}

}  // namespace

STRATA_REGISTER_COMMANDS("up", [](CLI::App& app) {
  auto options = std::make_shared<server::ControlPlaneOptions>();
  options->version = STRATA_VERSION;
  CLI::App* up = app.add_subcommand(
      "up",
      "Run the control plane here: REST API, SQLite store, scheduler and controllers, and a node "
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
  up->add_option("--nvml-library", options->nvml_library, "Where NVML is loaded from")
      ->capture_default_str();
  up->callback([options] { RunUp(*options); });
});

}  // namespace strata::cli
