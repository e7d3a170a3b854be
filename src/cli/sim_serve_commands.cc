// `strata sim serve`: replay an LLM request trace against engine models in virtual time, routed
// by the gateway's picker.
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/command_registry.h"
#include "engine/profile.h"
#include "sim/serve_sim.h"
#include "sim/trace_readers.h"
#include "sim/trace_shared_prefix.h"

namespace strata::cli {
namespace {

struct SimServeFlags {
  std::string trace;
  std::string format = "mooncake";
  int replicas = 8;
  std::string profile = "8b-h100";
  double rate_scale = 1.0;
  std::vector<std::string> policies = {"strata"};
  std::string output = "text";
  int max_num_seqs = 256;
  int kv_blocks = 0;
  double kv_offload_gib = 0;
  size_t max_requests = 0;
  uint64_t seed = 1;
};

Result<std::vector<sim::TraceRequest>> LoadTrace(const SimServeFlags& flags) {
  std::vector<sim::TraceRequest> trace;
  if (flags.format == "shared-prefix") {
    ASSIGN_OR_RETURN(sim::SharedPrefixWorkload workload,
                     sim::ReadSharedPrefixWorkload(flags.trace));
    trace = sim::GenerateSharedPrefixTrace(workload, flags.rate_scale, flags.seed);
  } else {
    Result<std::vector<sim::TraceRequest>> read = flags.format == "mooncake"
                                                      ? sim::ReadMooncakeTrace(flags.trace)
                                                      : sim::ReadAzureTrace(flags.trace);
    if (!read) return Err(read.error());
    trace = std::move(*read);
    // More load: arrivals closer together.
    for (sim::TraceRequest& request : trace) {
      request.arrival = Duration(
          static_cast<int64_t>(static_cast<double>(request.arrival.count()) / flags.rate_scale));
    }
  }
  if (flags.max_requests > 0 && trace.size() > flags.max_requests) {
    trace.resize(flags.max_requests);
  }
  return trace;
}

std::string TextReport(const sim::ServeSimReport& r) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(3) << r.policy << ": " << r.completed << "/" << r.requests
      << " done, TTFT p50/p90/p99 " << r.ttft_p50 << "/" << r.ttft_p90 << "/" << r.ttft_p99
      << " s, TPOT p50/p90 " << r.tpot_p50 * 1000 << "/" << r.tpot_p90 * 1000 << " ms, prefix hits "
      << r.prefix_hit_rate * 100 << " % (host tier " << r.host_hit_rate * 100
      << " %, router predicted " << r.predicted_hit_rate * 100 << " %), " << r.requests_per_second
      << " req/s, " << r.output_tokens_per_second << " tok/s, goodput "
      << r.goodput_requests_per_second << " req/s (" << r.goodput_fraction * 100
      << " %), utilization " << r.utilization * 100 << " %, preemptions " << r.preemptions;
  return out.str();
}

int RunSimServe(const SimServeFlags& flags) {
  if (flags.rate_scale <= 0) {
    std::cerr << "--rate-scale: must be > 0\n";
    return 2;
  }
  Result<engine::EngineProfile> profile = engine::ProfileByName(flags.profile);
  if (!profile) {
    std::cerr << "--profile: " << profile.error().message() << "\n";
    return 2;
  }
  const std::vector<std::string>& policies = flags.policies;
  for (const std::string& name : policies) {
    gateway::PickerOptions picker;
    picker.policy = name;
    Result<gateway::PickerProfile> profile = gateway::ResolvePickerProfile(picker);
    if (!profile) {
      std::cerr << "--policy: " << profile.error().message() << "\n";
      return 2;
    }
  }
  Result<std::vector<sim::TraceRequest>> trace = LoadTrace(flags);
  if (!trace) {
    std::cerr << trace.error().message() << "\n";
    return trace.error().code() == StatusCode::kNotFound ? 1 : 2;
  }
  nlohmann::json results = nlohmann::json::array();
  for (const std::string& policy : policies) {
    sim::ServeSimOptions options;
    options.replicas = flags.replicas;
    options.engine.profile = *profile;
    options.engine.max_num_seqs = flags.max_num_seqs;
    options.engine.num_kv_blocks = flags.kv_blocks;
    options.engine.cpu_offload_blocks = profile->HostBlocksIn(flags.kv_offload_gib);
    options.policy = policy;
    options.seed = flags.seed;
    Result<sim::ServeSimReport> report = sim::RunServeSim(*trace, options);
    if (!report) {
      std::cerr << report.error().message() << "\n";
      return 1;
    }
    if (flags.output == "json") {
      nlohmann::json entry = report->ToJson();
      entry["ideal_prefix_reuse"] = sim::IdealPrefixReuse(*trace);
      results.push_back(entry);
    } else {
      std::cout << TextReport(*report) << std::endl;
    }
  }
  if (flags.output == "json") {
    std::cout << (results.size() == 1 ? results[0] : results).dump(2) << std::endl;
  } else {
    std::cout << "ideal prefix reuse of the trace: " << std::fixed << std::setprecision(1)
              << sim::IdealPrefixReuse(*trace) * 100 << " % of blocks" << std::endl;
  }
  return 0;
}

}  // namespace

STRATA_REGISTER_COMMANDS("sim_serve", [](CLI::App& app) {
  CLI::App& sim = Subcommand(app, "sim", "Simulations and trace replays in virtual time");
  auto flags = std::make_shared<SimServeFlags>();
  CLI::App* serve = sim.add_subcommand(
      "serve", "Replay an LLM request trace against engine replicas behind the gateway's picker");
  serve
      ->add_option("--trace", flags->trace,
                   "Trace file (Mooncake .jsonl, Azure .csv, or an inference-perf values .yaml)")
      ->required();
  serve->add_option("--format", flags->format, "mooncake, azure or shared-prefix")
      ->check(CLI::IsMember({"mooncake", "azure", "shared-prefix"}));
  serve->add_option("--replicas", flags->replicas, "Engine replicas")->check(CLI::PositiveNumber);
  serve->add_option("--profile", flags->profile, "Engine latency profile");
  serve->add_option("--rate-scale", flags->rate_scale,
                    "Multiply the request rate (arrivals come this many times faster)");
  serve
      ->add_option("--policy", flags->policies,
                   "Routing policies, comma-separated: strata, round-robin, least-request, "
                   "epp-default, prefix-only, random")
      ->delimiter(',');
  serve->add_option("-o,--output", flags->output, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  serve->add_option("--max-num-seqs", flags->max_num_seqs, "Most sequences per engine batch")
      ->check(CLI::PositiveNumber);
  serve->add_option("--kv-blocks", flags->kv_blocks, "KV blocks per engine (default: profile's)")
      ->check(CLI::PositiveNumber);
  serve
      ->add_option("--kv-offload-gib", flags->kv_offload_gib,
                   "Host memory per engine for a CPU KV-offload tier, in GiB (default 0: none)")
      ->check(CLI::NonNegativeNumber);
  serve->add_option("--max-requests", flags->max_requests, "Replay only the first N requests");
  serve->add_option("--seed", flags->seed, "Seed for generated workloads and random routing");
  serve->callback([flags] { SetExitCode(RunSimServe(*flags)); });
});

}  // namespace strata::cli
