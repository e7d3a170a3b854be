// `strata sim openb`: placement quality on the Alibaba openb GPU trace, replayed the way the FGD
// artifact does, for one policy over a range of seeds.
#include <charconv>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command_registry.h"
#include "fmt/format.h"
#include "scheduler/placement_policy.h"
#include "sim/openb_replay.h"
#include "sim/openb_trace.h"

namespace strata::cli {
namespace {

// The arrived-load columns reported, in % of GPU capacity.
const std::vector<int> kReportedLoads = {90, 100, 110, 130};

struct OpenbOptions {
  std::string nodes_path;
  std::string pods_path;
  std::string policy = "strata";
  std::string seeds = "42-51";
  std::string output = "text";
};

Result<uint64_t> ParseSeed(std::string_view text) {
  uint64_t seed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return Err(InvalidArgumentError(fmt::format("--seeds: '{}' is not a seed", text)));
  }
  return seed;
}

// "42-51" (inclusive), "42,45,47" or "42".
Result<std::vector<uint64_t>> ParseSeeds(std::string_view text) {
  std::vector<uint64_t> seeds;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    const size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      ASSIGN_OR_RETURN(const uint64_t seed, ParseSeed(item));
      seeds.push_back(seed);
    } else {
      ASSIGN_OR_RETURN(const uint64_t first, ParseSeed(item.substr(0, dash)));
      ASSIGN_OR_RETURN(const uint64_t last, ParseSeed(item.substr(dash + 1)));
      if (last < first || last - first >= 10000) {
        return Err(InvalidArgumentError(
            fmt::format("--seeds: '{}' must be an ascending range of at most 10000 seeds", item)));
      }
      for (uint64_t seed = first; seed <= last; ++seed) seeds.push_back(seed);
    }
    start = comma + 1;
  }
  return seeds;
}

nlohmann::ordered_json SummaryJson(const sim::OpenbSummary& summary) {
  nlohmann::ordered_json alloc = nlohmann::ordered_json::object();
  for (const auto& [load, pct] : summary.alloc_pct) {
    alloc[std::to_string(load)] = pct ? nlohmann::ordered_json(std::round(*pct * 100) / 100)
                                      : nlohmann::ordered_json(nullptr);
  }
  nlohmann::ordered_json summary_json;
  summary_json["policy"] = summary.policy;
  summary_json["seeds"] = summary.seeds;
  summary_json["alloc_pct"] = std::move(alloc);
  // Per seed, the arrival positions of the pods failed below kOpenbEarlyLoadPct.
  nlohmann::ordered_json failed = nlohmann::ordered_json::object();
  for (size_t i = 0; i < summary.seeds.size() && i < summary.failed_early.size(); ++i) {
    failed[std::to_string(summary.seeds[i])] = summary.failed_early[i];
  }
  summary_json[fmt::format("failed_below_{}", sim::kOpenbEarlyLoadPct)] = std::move(failed);
  return summary_json;
}

// The report for `options`, ready to print.
Result<std::string> RunOpenb(const OpenbOptions& options) {
  {
    // An unknown policy is reported before any file is read.
    scheduler::PlacementRng rng;
    const scheduler::WorkloadMix mix;
    ASSIGN_OR_RETURN(auto known, scheduler::MakePlacementPolicy(options.policy, &mix, &rng));
  }
  const std::string& policy = options.policy;
  ASSIGN_OR_RETURN(const std::vector<uint64_t> seeds, ParseSeeds(options.seeds));
  ASSIGN_OR_RETURN(const std::vector<sim::OpenbNode> nodes,
                   sim::ReadOpenbNodes(options.nodes_path));
  ASSIGN_OR_RETURN(const std::vector<sim::OpenbPod> pods, sim::ReadOpenbPods(options.pods_path));
  ASSIGN_OR_RETURN(const sim::OpenbSummary summary,
                   sim::ReplayOpenb(nodes, pods, policy, seeds, kReportedLoads));
  if (options.output == "json") return SummaryJson(summary).dump() + "\n";
  std::string report = fmt::format("policy {}, {} seeds ({}), {} nodes, {} pods\n", policy,
                                   seeds.size(), options.seeds, nodes.size(), pods.size());
  report += "arrived GPU load %   GPU allocation % (mean over seeds)\n";
  for (const auto& [load, pct] : summary.alloc_pct) {
    report += fmt::format("{:>17}   {}\n", load, pct ? fmt::format("{:.2f}", *pct) : "-");
  }
  return report;
}

}  // namespace

STRATA_REGISTER_COMMANDS("sim_openb", [](CLI::App& app) {
  CLI::App& sim = Subcommand(app, "sim", "Simulations and trace replays in virtual time");
  CLI::App* openb = sim.add_subcommand(
      "openb",
      "Replay the Alibaba openb GPU trace (FGD artifact method) and report the GPU allocation "
      "ratio at 90/100/110/130 % arrived load");
  auto options = std::make_shared<OpenbOptions>();
  openb->add_option("--nodes", options->nodes_path, "Node list CSV (openb_node_list_gpu_node.csv)")
      ->required();
  openb->add_option("--pods", options->pods_path, "Pod list CSV (openb_pod_list_<variant>.csv)")
      ->required();
  openb
      ->add_option("--policy", options->policy,
                   "strata, random, dotprod, clustering, packing, bestfit or fgd")
      ->capture_default_str();
  openb->add_option("--seeds", options->seeds, "Seeds: a range 42-51 or a list 42,43")
      ->capture_default_str();
  openb->add_option("-o,--output", options->output, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  openb->callback([options] {
    const Result<std::string> report = RunOpenb(*options);
    if (!report) {
      std::cerr << "strata sim openb: " << report.error().message() << "\n";
      SetExitCode(1);
      return;
    }
    std::cout << *report;
  });
});

}  // namespace strata::cli
