// The `strata` command: one binary for the CLI verbs, the control plane, the node agent, the
// gateway, the engine simulator and the simulations. Each area adds its verbs from its own
// <area>_commands.cc (see command_registry.h).
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/command_registry.h"
#include "common/logging.h"

int main(int argc, char** argv) {
  CLI::App app{"strata: a platform for AI workloads on GPU clusters"};
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off");
  app.parse_complete_callback([&] {
    strata::Status status = strata::InitLogging(log_level);
    if (!status.ok()) throw CLI::ValidationError("--log-level", status.message());
  });

  CLI::App* version = app.add_subcommand("version", "Print the version");
  version->callback([] { std::cout << "strata " << STRATA_VERSION << "\n"; });

  strata::cli::InstallCommands(app);
  CLI11_PARSE(app, argc, argv);
  return strata::cli::ExitCode();
}
