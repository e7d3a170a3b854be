// `strata cost`: what the cluster's allocations cost, by team, project, queue, job, service or
// pod, over a window and, with --step, per step of it, from the control plane's cost endpoint
// (its durable ledger; OpenCost's model: requests x price x time held). Exit codes: 0 success, 1 an
// error from the server (or none reachable), 2 usage.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "cli/client_flags.h"
#include "cli/command_registry.h"
#include "client/api_client.h"
#include "observe/cost.h"
#include "server/cost_api.h"

namespace strata::cli {
namespace {

using Json = nlohmann::json;

struct CostOptions {
  ClientFlags flags;
  std::string by = "team";
  std::string window = "24h";
  std::string step;
  std::string output;
};

// A number of the server's answer, or an error naming the field.
Result<double> Number(const Json& line, const char* field, const std::string& where) {
  if (!line.is_object() || !line.contains(field) || !line[field].is_number()) {
    return Err(InternalError(fmt::format("the server's cost report lacks {}.{}", where, field)));
  }
  return line[field].get<double>();
}

// One table row: NAME PODS GPU-HOURS GPU CPU MEMORY TOTAL PER-HOUR PER-1M-TOKENS.
Result<std::string> Row(const Json& line, const std::string& where) {
  if (!line.is_object() || !line.contains("name") || !line["name"].is_string()) {
    return Err(InternalError("the server's cost report lacks " + where + ".name"));
  }
  ASSIGN_OR_RETURN(double pods, Number(line, "pods", where));
  ASSIGN_OR_RETURN(double gpu_hours, Number(line, "gpuHours", where));
  ASSIGN_OR_RETURN(double gpu, Number(line, "gpuCost", where));
  ASSIGN_OR_RETURN(double cpu, Number(line, "cpuCost", where));
  ASSIGN_OR_RETURN(double memory, Number(line, "memoryCost", where));
  ASSIGN_OR_RETURN(double total, Number(line, "total", where));
  ASSIGN_OR_RETURN(double rate, Number(line, "hourlyRate", where));
  std::string per_million = "-";
  if (line.contains("costPerMillionTokens") && line["costPerMillionTokens"].is_number()) {
    per_million = fmt::format("{:.4f}", line["costPerMillionTokens"].get<double>());
  }
  return fmt::format(
      "{:<32} {:>5} {:>10.2f} {:>10.2f} {:>8.2f} {:>8.2f} {:>10.2f} {:>9.2f} {:>13}\n",
      line["name"].get<std::string>(), pods, gpu_hours, gpu, cpu, memory, total, rate, per_million);
}

Result<std::string> FormatTable(const Json& report, const std::string& by) {
  if (!report.is_object() || !report.contains("lines") || !report["lines"].is_array()) {
    return Err(InternalError("the server's cost report lacks lines"));
  }
  std::string upper = by;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string out =
      fmt::format("{:<32} {:>5} {:>10} {:>10} {:>8} {:>8} {:>10} {:>9} {:>13}\n", upper, "PODS",
                  "GPU-HOURS", "GPU", "CPU", "MEMORY", "TOTAL", "PER-HOUR", "PER-1M-TOKENS");
  for (size_t i = 0; i < report["lines"].size(); ++i) {
    ASSIGN_OR_RETURN(std::string row, Row(report["lines"][i], fmt::format("lines[{}]", i)));
    out += row;
  }
  ASSIGN_OR_RETURN(std::string total, Row(report.value("total", Json()), "total"));
  out += total;
  out += fmt::format("{} from {} to {}", report.value("currency", std::string("?")),
                     report.value("windowStart", std::string("?")),
                     report.value("windowEnd", std::string("?")));
  const Json& unpriced = report.value("unpricedGpuModels", Json::array());
  if (unpriced.is_array() && !unpriced.empty()) {
    out += "; charged at the default GPU price: ";
    for (size_t i = 0; i < unpriced.size(); ++i) {
      out += (i > 0 ? ", " : "") + unpriced[i].get<std::string>();
    }
  }
  return out + "\n";
}

// The spend per step of the report's series: one row per step (its start, UTC), one column per
// group (the first 8 by total; the rest summed under "others"), and for services the tokens of
// each step's cost per million tokens below its cost.
Result<std::string> FormatSeries(const Json& report) {
  const Json& series = report.value("series", Json());
  if (!series.is_object() || !series.contains("starts") || !series["starts"].is_array() ||
      !series.contains("lines") || !series["lines"].is_array()) {
    return Err(InternalError("the server's cost report lacks series"));
  }
  constexpr size_t kColumns = 8;
  const Json& lines = series["lines"];
  const size_t steps = series["starts"].size();
  std::vector<std::string> names;
  std::vector<std::vector<double>> columns;
  for (size_t i = 0; i < lines.size(); ++i) {
    const Json& line = lines[i];
    if (!line.is_object() || !line.contains("name") || !line["name"].is_string() ||
        !line.contains("cost") || !line["cost"].is_array() || line["cost"].size() != steps) {
      return Err(InternalError(fmt::format("the server's cost report lacks series.lines[{}]", i)));
    }
    if (i == kColumns) {
      names.push_back("others");
      columns.emplace_back(steps, 0.0);
    }
    if (i >= kColumns) {
      for (size_t s = 0; s < steps; ++s) columns.back()[s] += line["cost"][s].get<double>();
      continue;
    }
    names.push_back(line["name"].get<std::string>());
    columns.push_back(line["cost"].get<std::vector<double>>());
  }
  std::string out = fmt::format("{:<21}", "STEP");
  for (const std::string& name : names) out += fmt::format(" {:>12.12}", name);
  out += "\n";
  for (size_t s = 0; s < steps; ++s) {
    out += fmt::format("{:<21}", series["starts"][s].get<std::string>());
    for (const std::vector<double>& column : columns) {
      // A few seconds of a GPU is not "0.00": three significant digits below one.
      const double value = column[s];
      out += value == 0 || std::abs(value) >= 1 ? fmt::format(" {:>12.2f}", value)
                                                : fmt::format(" {:>12.3g}", value);
    }
    out += "\n";
  }
  return out;
}

void RunCost(const CostOptions& options) {
  if (auto dimension = observe::ParseCostDimension(options.by); !dimension) {
    Fail(dimension.error(), 2);
    return;
  }
  auto client = Connect(options.flags);
  if (client == nullptr) return;
  Result<Json> report = client->Get(std::string(server::CostApi::kPath) + "?by=" + options.by +
                                    "&window=" + options.window +
                                    (options.step.empty() ? "" : "&step=" + options.step));
  Result<std::string> text =
      report ? (options.output == "json" ? Result<std::string>(report->dump(2) + "\n")
                                         : FormatTable(*report, options.by))
             : Result<std::string>(Err(report.error()));
  if (text && report && options.output != "json" && !options.step.empty()) {
    Result<std::string> series = FormatSeries(*report);
    text = series ? Result<std::string>(*series + "\n" + *text) : series;
  }
  if (!text) {
    Fail(text.error());
    return;
  }
  std::cout << *text;
}

}  // namespace

STRATA_REGISTER_COMMANDS("cost", [](CLI::App& app) {
  auto options = std::make_shared<CostOptions>();
  CLI::App* cost = app.add_subcommand(
      "cost",
      "What allocations cost (requests x price x time held), by team, project, queue, "
      "job, service or pod");
  AddClientFlags(cost, options->flags, /*namespaced_verbs=*/false);
  cost->add_option("--by", options->by, "team | project | queue | job | service | pod")
      ->capture_default_str();
  cost->add_option("--window", options->window, "how far back, as a duration (24h) or days (7d)")
      ->capture_default_str();
  cost->add_option("--step", options->step,
                   "also print the spend per step of the window (1h, 1d), one column per group");
  cost->add_option("-o,--output", options->output, "json for the server's report as it is")
      ->check(CLI::IsMember({"", "json"}));
  cost->callback([options] { RunCost(*options); });
});

}  // namespace strata::cli
