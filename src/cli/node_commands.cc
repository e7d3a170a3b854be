// `strata node inventory`: what GPUs a node agent on this machine would report, through NVML
// when the driver is there, else the simulated inventory (and the line that says why); as a table,
// or with -o json every field (UUIDs, bytes, MIG instances) for scripts (tests/device/run.sh).
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command_registry.h"
#include "node/nvml_inventory.h"
#include "node/simulated_inventory.h"

namespace strata::cli {
namespace {

std::string LocalHostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

struct InventoryFlags {
  std::string simulate{node::kDefaultSimulateSpec};
  std::string nvml_library = node::kNvmlLibrary;
  std::string output;  // "" (a table) or "json"
};

nlohmann::json InventoryJson(const node::LocalInventory& local) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const node::NodeGpus& n : local.nodes) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const node::GpuDevice& gpu : n.gpus) {
      nlohmann::json migs = nlohmann::json::array();
      for (const node::MigInstance& mig : gpu.mig_instances) {
        migs.push_back({{"uuid", mig.uuid}, {"name", mig.name}, {"memoryBytes", mig.memory_bytes}});
      }
      gpus.push_back({{"index", gpu.index},
                      {"name", gpu.name},
                      {"uuid", gpu.uuid},
                      {"memoryBytes", gpu.memory_bytes},
                      {"migEnabled", gpu.mig_enabled},
                      {"migInstances", std::move(migs)},
                      {"nvlinkIsland", gpu.nvlink_island}});
    }
    nodes.push_back({{"name", n.node_name}, {"rack", n.rack}, {"gpus", std::move(gpus)}});
  }
  return {{"source", local.inventory->Describe()},
          {"notice", local.notice},
          {"nodes", std::move(nodes)}};
}

void PrintInventory(const InventoryFlags& flags) {
  Result<node::LocalInventory> local =
      node::OpenLocalInventory(flags.nvml_library, LocalHostname(), flags.simulate);
  if (!local) {
    std::cerr << "error: --simulate " << local.error().message() << "\n";
    SetExitCode(2);
    return;
  }
  if (flags.output == "json") {
    std::cout << InventoryJson(*local).dump(2) << "\n";
    return;
  }
  std::cout << local->notice << "\n";
  std::printf("%-14s %-6s %5s  %-26s %8s %6s  %s\n", "NODE", "RACK", "INDEX", "NAME", "MEMORY",
              "ISLAND", "MIG");
  for (const node::NodeGpus& n : local->nodes) {
    for (const node::GpuDevice& gpu : n.gpus) {
      std::string mig = gpu.mig_enabled
                            ? "on (" + std::to_string(gpu.mig_instances.size()) + " instances)"
                            : "off";
      std::printf("%-14s %-6s %5d  %-26s %5lldGiB %6d  %s\n", n.node_name.c_str(),
                  n.rack.empty() ? "-" : n.rack.c_str(), gpu.index, gpu.name.c_str(),
                  static_cast<long long>(gpu.memory_bytes >> 30), gpu.nvlink_island, mig.c_str());
    }
  }
}

void InstallNodeCommands(CLI::App& app) {
  CLI::App& node = Subcommand(app, "node", "Inspect this machine as a node agent sees it");
  CLI::App* inventory = node.add_subcommand(
      "inventory", "List the GPUs found through NVML, or the simulated inventory without it");
  auto flags = std::make_shared<InventoryFlags>();
  inventory->add_option("--simulate", flags->simulate,
                        "Simulated cluster when NVML is absent, e.g. 4x8:H100-80GB,racks=2");
  inventory->add_option("--nvml-library", flags->nvml_library, "Path or name of the NVML library");
  inventory->add_option("-o,--output", flags->output, "json: every field, for scripts")
      ->check(CLI::IsMember({"json"}));
  inventory->callback([flags] { PrintInventory(*flags); });
}

}  // namespace

STRATA_REGISTER_COMMANDS("node", InstallNodeCommands);

}  // namespace strata::cli
