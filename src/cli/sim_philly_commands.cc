// `strata sim philly`: quota and fairness on the Microsoft Philly trace, replayed in virtual
// time through the real scheduler under one queue policy.
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command_registry.h"
#include "fmt/format.h"
#include "sim/philly_replay.h"
#include "sim/philly_trace.h"

namespace strata::cli {
namespace {

struct PhillyOptions {
  std::string trace_path;
  int gpus = 0;
  std::string policy = "strata";
  double from_day = 0;
  double days = 0;  // 0: to the end of the trace
  std::string output = "text";
};

double Round(double value, double scale) { return std::round(value * scale) / scale; }

nlohmann::ordered_json DelayJson(const sim::PhillyDelayStats& stats) {
  return {{"jobs", stats.jobs},
          {"mean_s", Round(stats.mean_s, 10)},
          {"p50_s", Round(stats.p50_s, 10)},
          {"p95_s", Round(stats.p95_s, 10)}};
}

nlohmann::ordered_json ReportJson(const PhillyOptions& options, sim::PhillyPolicy policy,
                                  const sim::PhillyReport& report, double run_time_s) {
  nlohmann::ordered_json queues = nlohmann::ordered_json::object();
  for (const auto& [name, queue] : report.queues) {
    queues[name] = {{"quota_gpus", Round(queue.quota_gpus, 1000)},
                    {"queueing", DelayJson(queue.queueing)}};
  }
  return {{"policy", sim::PhillyPolicyName(policy)},
          {"gpus", options.gpus},
          {"from_day", options.from_day},
          {"days", options.days},
          {"jobs", report.jobs},
          {"rejected_jobs", report.rejected_jobs},
          {"unfinished_jobs", report.unfinished_jobs},
          {"cycles", report.cycles},
          {"utilisation", Round(report.utilisation, 10000)},
          {"gpu_hours", Round(report.gpu_hours, 10)},
          {"lost_gpu_hours", Round(report.lost_gpu_hours, 10)},
          {"lost_fraction",
           report.gpu_hours > 0 ? Round(report.lost_gpu_hours / report.gpu_hours, 100000) : 0.0},
          {"preemptions", report.preemptions},
          {"makespan_s", Round(report.makespan_s, 1)},
          {"queueing", DelayJson(report.queueing)},
          {"jct", DelayJson(report.jct)},
          {"queues", std::move(queues)},
          {"run_time_s", Round(run_time_s, 100)}};
}

std::string ReportText(const PhillyOptions& options, const sim::PhillyReport& report) {
  std::string text = fmt::format(
      "policy {}, {} GPUs, {} jobs ({} larger than the cluster, {} never placed), {} cycles\n"
      "utilisation {:.1f} %, preemptions {}, lost {:.1f} of {:.1f} GPU-hours ({:.3f} %)\n"
      "queueing delay s: mean {:.0f}, p50 {:.0f}, p95 {:.0f}; JCT s: mean {:.0f}, p50 {:.0f}, "
      "p95 {:.0f}\n",
      options.policy, options.gpus, report.jobs, report.rejected_jobs, report.unfinished_jobs,
      report.cycles, report.utilisation * 100, report.preemptions, report.lost_gpu_hours,
      report.gpu_hours, report.gpu_hours > 0 ? 100 * report.lost_gpu_hours / report.gpu_hours : 0,
      report.queueing.mean_s, report.queueing.p50_s, report.queueing.p95_s, report.jct.mean_s,
      report.jct.p50_s, report.jct.p95_s);
  text += "queue     quota GPUs   jobs   delay mean s   p50 s    p95 s\n";
  for (const auto& [name, queue] : report.queues) {
    text += fmt::format("{:<8} {:>11.2f} {:>6} {:>14.0f} {:>7.0f} {:>8.0f}\n", name,
                        queue.quota_gpus, queue.queueing.jobs, queue.queueing.mean_s,
                        queue.queueing.p50_s, queue.queueing.p95_s);
  }
  return text;
}

// The jobs submitted in [from_day, from_day + days) counted from the trace's first submit.
std::vector<sim::PhillyJob> Window(std::vector<sim::PhillyJob> jobs, double from_day, double days) {
  if (jobs.empty()) return jobs;
  TimePoint first = jobs.front().submitted;
  for (const sim::PhillyJob& job : jobs) first = std::min(first, job.submitted);
  const auto day = [](double d) {
    return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(d * 86400));
  };
  const TimePoint begin = first + day(from_day);
  const TimePoint end = days > 0 ? begin + day(days) : TimePoint::max();
  std::erase_if(jobs, [&](const sim::PhillyJob& job) {
    return job.submitted < begin || job.submitted >= end;
  });
  return jobs;
}

Result<std::string> RunPhilly(const PhillyOptions& options) {
  ASSIGN_OR_RETURN(const sim::PhillyPolicy policy, sim::ParsePhillyPolicy(options.policy));
  if (options.from_day < 0 || options.days < 0) {
    return Err(InvalidArgumentError("--from-day and --days must not be negative"));
  }
  ASSIGN_OR_RETURN(std::vector<sim::PhillyJob> jobs, sim::ReadPhillyTrace(options.trace_path));
  jobs = Window(std::move(jobs), options.from_day, options.days);
  const auto started = std::chrono::steady_clock::now();
  // Progress on stderr every 10 s of real time, so a minutes-long replay is not silent.
  auto last_said = started;
  sim::PhillyReplayOptions replay{.gpus = options.gpus, .policy = policy};
  replay.progress = [&](size_t arrived, size_t total, Duration elapsed) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_said < std::chrono::seconds(10)) return;
    last_said = now;
    std::cerr << fmt::format(
        "sim philly: {} of {} jobs arrived ({:.0f} %), virtual day {:.1f}, "
        "{:.0f} s so far\n",
        arrived, total, 100.0 * static_cast<double>(arrived) / static_cast<double>(total),
        std::chrono::duration<double>(elapsed).count() / 86400,
        std::chrono::duration<double>(now - started).count());
  };
  ASSIGN_OR_RETURN(const sim::PhillyReport report, sim::ReplayPhilly(jobs, replay));
  const double run_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (options.output == "json")
    return ReportJson(options, policy, report, run_time_s).dump() + "\n";
  return ReportText(options, report);
}

}  // namespace

STRATA_REGISTER_COMMANDS("sim_philly", [](CLI::App& app) {
  CLI::App& sim = Subcommand(app, "sim", "Simulations and trace replays in virtual time");
  CLI::App* philly = sim.add_subcommand(
      "philly",
      "Replay the Microsoft Philly trace through the scheduler (virtual clusters as quota "
      "queues, 30-minute checkpoints) and report utilisation, queueing delay, JCT and work lost "
      "to preemption");
  auto options = std::make_shared<PhillyOptions>();
  philly->add_option("--trace", options->trace_path, "philly.csv (Pollux artifact)")->required();
  philly->add_option("--gpus", options->gpus, "Cluster GPUs, a multiple of 8")->required();
  philly->add_option("--policy", options->policy, "strata, fifo or strict")->capture_default_str();
  philly->add_option("--from-day", options->from_day, "Replay jobs submitted from this day on")
      ->capture_default_str();
  philly->add_option("--days", options->days, "Replay this many days of submissions (0: all)")
      ->capture_default_str();
  philly->add_option("-o,--output", options->output, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  philly->callback([options] {
    const Result<std::string> report = RunPhilly(*options);
    if (!report) {
      std::cerr << "strata sim philly: " << report.error().message() << "\n";
      SetExitCode(1);
      return;
    }
    std::cout << *report;
  });
});

}  // namespace strata::cli
