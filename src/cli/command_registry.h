#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace strata::cli {

// Adds a group of subcommands to the `strata` app. Each area of the CLI lives in its own
// src/cli/<area>_commands.cc and registers itself with STRATA_REGISTER_COMMANDS, so main.cc
// never changes when an area is added. Installers run once, in name order, before parsing.
using CommandInstaller = std::function<void(CLI::App& app)>;

// Registers `installer` under `name` (unique). Returns true; meant for static initialisation.
bool RegisterCommands(std::string name, CommandInstaller installer);

// Runs every registered installer on `app`, in name order.
void InstallCommands(CLI::App& app);

// The subcommand `name` of `parent`, created with `description` if it does not exist yet, so that
// two areas can both add verbs under one noun (`strata sim openb`, `strata sim philly`).
CLI::App& Subcommand(CLI::App& parent, std::string_view name, std::string_view description);

// The process exit code: a subcommand's callback sets it (0 success, 1 failure the user should
// read about, 2 usage error). main returns it.
void SetExitCode(int code);
int ExitCode();

// This binary's path (for engine-sim replicas on simulated GPUs); "strata" when unknown.
std::string SelfPath();

// Prints "error: MESSAGE" to stderr and sets the exit code (1 by default, 2 for usage errors).
void Fail(const Status& status, int exit_code = 1);

}  // namespace strata::cli

#define STRATA_CLI_CONCAT_INNER(a, b) a##b
#define STRATA_CLI_CONCAT(a, b) STRATA_CLI_CONCAT_INNER(a, b)
#define STRATA_REGISTER_COMMANDS(name, installer)                                    \
  [[maybe_unused]] static const bool STRATA_CLI_CONCAT(strata_commands_, __LINE__) = \
      ::strata::cli::RegisterCommands(name, installer)
