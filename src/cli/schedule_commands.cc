// `strata bench schedule`: scheduler throughput on a generated cluster (scheduler/
// synthetic_load.h): one Scheduler::Cycle over P pods on N nodes, single-threaded. Prints
// {"pods", "placed", "workloads", "pending", "seconds", "pods_per_s", "peak_rss_mib"}.
#include <sys/resource.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command_registry.h"
#include "scheduler/synthetic_load.h"

namespace strata::cli {
namespace {

void RunScheduleBench(const scheduler::SyntheticLoad& load, const std::string& output) {
  if (!scheduler::IsSyntheticShape(load.shape)) {
    std::cerr << "error: --shape: expected 1gpu, mixed, gangs or pools, got \"" << load.shape
              << "\"\n";
    SetExitCode(2);
    return;
  }
  if (load.nodes < 1 || load.pods < 1 || load.gpus_per_node < 1 || load.gpus_per_node > 16) {
    std::cerr << "error: --nodes and --pods must be positive, --gpus-per-node 1..16\n";
    SetExitCode(2);
    return;
  }
  const scheduler::ThroughputResult result = scheduler::MeasureThroughput(load);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double pods_per_s = result.seconds > 0 ? result.placed / result.seconds : 0.0;
  nlohmann::json out = {{"pods", result.pods},
                        {"placed", result.placed},
                        {"workloads", result.workloads},
                        {"pending", result.pending},
                        {"seconds", result.seconds},
                        {"pods_per_s", pods_per_s},
                        {"peak_rss_mib", usage.ru_maxrss / 1024}};
  if (output == "json") {
    std::cout << out.dump() << "\n";
    return;
  }
  std::cout << result.placed << "/" << result.pods << " pods placed in " << result.seconds << " s ("
            << pods_per_s << " pods/s), peak RSS " << usage.ru_maxrss / 1024 << " MiB\n";
}

}  // namespace

STRATA_REGISTER_COMMANDS("schedule", [](CLI::App& app) {
  CLI::App& bench = Subcommand(app, "bench", "Benchmarks of strata's components");
  auto load = std::make_shared<scheduler::SyntheticLoad>();
  auto output = std::make_shared<std::string>("text");
  CLI::App* cmd = bench.add_subcommand("schedule", "Scheduler throughput on a generated cluster");
  cmd->add_option("--nodes", load->nodes, "Nodes in the cluster");
  cmd->add_option("--gpus-per-node", load->gpus_per_node, "GPUs per node");
  cmd->add_option("--pods", load->pods, "Pods to schedule, in one cycle");
  cmd->add_option("--shape", load->shape, "1gpu | mixed | gangs | pools");
  cmd->add_option("--seed", load->seed, "Seed for the workload mix and tie-breaks");
  cmd->add_option("-o,--output", *output, "text | json");
  cmd->callback([load, output] { RunScheduleBench(*load, *output); });
});

}  // namespace strata::cli
