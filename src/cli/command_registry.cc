#include "cli/command_registry.h"

#include <unistd.h>

#include <climits>
#include <iostream>
#include <map>

#include "common/check.h"

namespace strata::cli {
namespace {

std::map<std::string, CommandInstaller>& Registry() {
  static std::map<std::string, CommandInstaller> registry;
  return registry;
}

int g_exit_code = 0;

}  // namespace

bool RegisterCommands(std::string name, CommandInstaller installer) {
  bool inserted = Registry().emplace(std::move(name), std::move(installer)).second;
  STRATA_CHECK(inserted);
  return true;
}

void InstallCommands(CLI::App& app) {
  for (auto& [name, installer] : Registry()) installer(app);
}

CLI::App& Subcommand(CLI::App& parent, std::string_view name, std::string_view description) {
  for (CLI::App* sub : parent.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() == name) return *sub;
  }
  CLI::App* sub = parent.add_subcommand(std::string(name), std::string(description));
  sub->require_subcommand(0, 1);
  return *sub;
}

void SetExitCode(int code) { g_exit_code = code; }
int ExitCode() { return g_exit_code; }

std::string SelfPath() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "strata";
  return std::string(path, static_cast<size_t>(n));
}

void Fail(const Status& status, int exit_code) {
  std::cerr << "error: " << status.message() << "\n";
  SetExitCode(exit_code);
}

}  // namespace strata::cli
