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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version exit 0; any usage error exits 2, as scripts expect.
    return app.exit(e) == 0 ? 0 : 2;
  }
  return strata::cli::ExitCode();
}
