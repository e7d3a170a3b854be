// `strata sim autoscale`: replay an LLM request trace in virtual time with an autoscaling policy
// deciding the replica count (cold starts, the gateway as activator), and report SLO attainment,
// GPU-hours, scale events and queueing during scale-up.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>

#include "api/duration.h"
#include "cli/command_registry.h"
#include "engine/profile.h"
#include "fmt/format.h"
#include "sim/autoscale_sim.h"
#include "sim/trace_readers.h"

namespace strata::cli {
namespace {

struct SimAutoscaleFlags {
  std::string trace;
  std::string format = "azure";
  std::string cold_start = "82s";
  std::string profile = "8b-h100";
  std::string policy = "strata";
  std::string output = "text";
  double target_load = 12;
  double headroom = sim::AutoscaleSimOptions{}.headroom;
  bool plan_in_prompt_tokens = false;
  double target_busy_share = sim::AutoscaleSimOptions{}.target_busy_share;
  double keda_target_waiting = 5;
  int static_replicas = 0;
  int max_replicas = 64;
};

Result<sim::AutoscaleSimReport> Run(const SimAutoscaleFlags& flags) {
  sim::AutoscaleSimOptions options;
  ASSIGN_OR_RETURN(options.policy, sim::ParseAutoscalePolicy(flags.policy));
  Result<Duration> cold_start = api::ParseDuration(flags.cold_start);
  if (!cold_start) return Err(cold_start.error().WithPrefix("--cold-start"));
  options.cold_start = *cold_start;
  Result<engine::EngineProfile> profile = engine::ProfileByName(flags.profile);
  if (!profile) return Err(profile.error().WithPrefix("--profile"));
  options.engine.profile = *profile;
  options.target_load = flags.target_load;
  options.headroom = flags.headroom;
  options.plan_in_prompt_tokens = flags.plan_in_prompt_tokens;
  options.target_busy_share = flags.target_busy_share;
  options.keda_target_waiting = flags.keda_target_waiting;
  options.static_replicas = flags.static_replicas;
  options.max_replicas = flags.max_replicas;
  ASSIGN_OR_RETURN(const std::vector<sim::TraceRequest> trace,
                   flags.format == "azure" ? sim::ReadAzureTrace(flags.trace)
                                           : sim::ReadMooncakeTrace(flags.trace));
  return sim::RunAutoscaleSim(trace, options);
}

std::string TextReport(const sim::AutoscaleSimReport& r) {
  const std::string capacity =
      r.learned_capacity > 0
          ? fmt::format("learned capacity: {:.2f} req/s per replica within the SLO\n",
                        r.learned_capacity)
          : "";
  return fmt::format(
             "{} (cold start {:.0f} s): SLO attainment {:.2f} % (TTFT <= 2 s), {:.2f} GPU-hours, "
             "TTFT p50/p99 {:.3f}/{:.3f} s, {} of {} completed, {} rejected\n"
             "replicas: {} initial, {} peak; scale events: {} up, {} down\n"
             "during scale-up: {} arrived (TTFT p99 {:.3f} s), {} held by the gateway (max wait "
             "{:.1f} s)\n",
             r.policy, r.cold_start_seconds, r.slo_attainment * 100, r.gpu_hours, r.ttft_p50,
             r.ttft_p99, r.completed, r.requests, r.rejected, r.initial_replicas, r.peak_replicas,
             r.scale_ups, r.scale_downs, r.during_scale_up, r.during_scale_up_ttft_p99,
             r.held_requests, r.held_wait_max) +
         capacity;
}

}  // namespace

STRATA_REGISTER_COMMANDS("sim_autoscale", [](CLI::App& app) {
  CLI::App& sim = Subcommand(app, "sim", "Simulations and trace replays in virtual time");
  auto flags = std::make_shared<SimAutoscaleFlags>();
  CLI::App* autoscale = sim.add_subcommand(
      "autoscale",
      "Replay an LLM request trace with an autoscaling policy, cold starts and the gateway as "
      "activator; report SLO attainment, GPU-hours and scale events");
  autoscale->add_option("--trace", flags->trace, "Trace file (Azure .csv or Mooncake .jsonl)")
      ->required();
  autoscale->add_option("--format", flags->format, "azure or mooncake")
      ->check(CLI::IsMember({"azure", "mooncake"}))
      ->capture_default_str();
  autoscale
      ->add_option("--cold-start", flags->cold_start,
                   "From replica creation to readiness, e.g. 82s, 5m")
      ->capture_default_str();
  autoscale->add_option("--profile", flags->profile, "Engine latency profile")
      ->capture_default_str();
  autoscale->add_option("--policy", flags->policy, "strata, kpa, keda or static-peak")
      ->capture_default_str();
  autoscale
      ->add_option("--target-load", flags->target_load,
                   "Waiting + running requests per replica (kpa)")
      ->capture_default_str();
  autoscale
      ->add_option("--headroom", flags->headroom,
                   "Spare capacity over the forecast need, e.g. 0.2 for 20 % (strata)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  autoscale->add_flag("--plan-in-prompt-tokens", flags->plan_in_prompt_tokens,
                      "Plan in prompt tokens per second instead of requests per second (strata)");
  autoscale
      ->add_option("--target-busy-share", flags->target_busy_share,
                   "Share of its time a replica may spend prefilling; its capacity is measured "
                   "from it (0: learned from misses alone, as when the gateway does not report "
                   "busy time) (strata)")
      ->check(CLI::Range(0.0, 0.99))
      ->capture_default_str();
  autoscale
      ->add_option("--keda-target-waiting", flags->keda_target_waiting,
                   "Waiting requests per replica (keda)")
      ->capture_default_str();
  autoscale
      ->add_option("--static-replicas", flags->static_replicas,
                   "Always-on replicas (static-peak); 0: the fewest that serve the busiest 60 s "
                   "with 99 % in the SLO")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  autoscale->add_option("--max-replicas", flags->max_replicas, "Most replicas")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  autoscale->add_option("-o,--output", flags->output, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  autoscale->callback([flags] {
    const Result<sim::AutoscaleSimReport> report = Run(*flags);
    if (!report) {
      std::cerr << "strata sim autoscale: " << report.error().message() << "\n";
      SetExitCode(report.error().code() == StatusCode::kNotFound ? 1 : 2);
      return;
    }
    if (flags->output == "json") {
      std::cout << report->ToJson().dump(2) << "\n";
    } else {
      std::cout << TextReport(*report);
    }
  });
});

}  // namespace strata::cli
