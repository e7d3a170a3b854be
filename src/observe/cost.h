#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "metrics/metrics.h"

// Cost accounting after OpenCost's model: a pod costs what it was allocated (its requests)
// times the price of each resource times how long it held them, whether it used them or not.
// Costs roll up by a pod label (team, project), queue, job or service; services also get a
// cost per million tokens from the gateway's token counts. Plain values and pure functions;
// thread-safe.

namespace strata::observe {

// Prices per hour, from configuration. Currency is a label only; no conversion happens.
struct PriceTable {
  std::string currency = "USD";
  std::map<std::string, double> gpu_hour;  // by GPU model as nodes report it ("H100-80GB")
  double default_gpu_hour = 0;             // a model missing from gpu_hour
  double cpu_core_hour = 0;
  double memory_gib_hour = 0;
};

// On-demand list prices of a large public cloud, rounded, for clusters that configure none:
// B200 5.00, H200 3.50, H100 2.50, A100 1.50, L40S 1.00, A10 0.75, L4 0.50, others 1.00 per
// GPU-hour; 0.03 per core-hour; 0.004 per GiB-hour (USD).
PriceTable DefaultPriceTable();

// Parses a price table from YAML or JSON:
//
//   currency: USD
//   gpuHour: {H100-80GB: 2.49, A100-80GB: 1.60}
//   defaultGpuHour: 1.0
//   cpuCoreHour: 0.031
//   memoryGiBHour: 0.0042
//
// Every field is optional (missing prices are 0). Returns InvalidArgument naming `source` and
// the field ("prices.yaml: gpuHour.H100-80GB: expected a price >= 0, got \"cheap\""), for an
// unknown field too; nothing is returned partially.
Result<PriceTable> ParsePriceTable(std::string_view text, std::string_view source);

// Reads and parses the price table file at `path` (ParsePriceTable, errors naming the path).
// Returns InvalidArgument naming the path when the file cannot be read.
Result<PriceTable> ReadPriceTableFile(const std::string& path);

// What one allocation is charged per hour: the price table's prices in force when the ledger
// opened its record (cost_ledger.h), so that a later price change does not re-price the past.
struct UnitPrices {
  double gpu_hour = 0;  // per GPU of the allocation's model
  double cpu_core_hour = 0;
  double memory_gib_hour = 0;
  bool gpu_priced = true;  // false: the model is missing from the table, charged its default

  bool operator==(const UnitPrices&) const = default;
};

// The prices `prices` charges an allocation of GPUs of `gpu_model` (empty: none).
UnitPrices PricesFor(const PriceTable& prices, std::string_view gpu_model);

// One pod's allocation over time: what it requested, when it held it, and at which prices.
struct CostPod {
  std::string uid;
  std::string name;
  std::string namespace_name;
  std::map<std::string, std::string> labels;  // the team and project labels cost reads
  std::string queue;                          // the Queue (cluster queue), as GpuHolder::queue
  std::string job;                            // owning Job, or empty
  std::string service;                        // owning Service, or empty
  std::string gpu_model;                      // of the GPUs it holds; empty when it holds none
  double gpus = 0;                            // GPUs held (fractional shares summed)
  double cpu_cores = 0;
  double memory_gib = 0;
  TimePoint start{};             // bound to its node
  std::optional<TimePoint> end;  // released; nullopt while it still holds its resources
  UnitPrices prices;
  // The pods this allocation stands for: 1, or for an hour the ledger rolled up (the group's
  // allocations over that hour read back as one), the allocations that started in that hour.
  int pods = 1;
};

// What cost rolls up by.
enum class CostDimension { kPod, kTeam, kProject, kQueue, kJob, kService };

// "pod", "team", "project", "queue", "job", "service". InvalidArgument listing the choices
// for anything else.
Result<CostDimension> ParseCostDimension(std::string_view text);
std::string_view CostDimensionName(CostDimension dimension);

// The group of pods without a value for the dimension (OpenCost's word for it).
inline constexpr std::string_view kUnallocated = "__unallocated__";
// The job and pod of spend older than the ledger's raw retention, which it keeps by team,
// project, queue and service only (cost_ledger.h).
inline constexpr std::string_view kRolledUp = "__rolled_up__";

// The cost of one group over the window.
struct CostLine {
  std::string name;
  int pods = 0;
  double gpu_hours = 0;
  double gpu_cost = 0;
  double cpu_cost = 0;
  double memory_cost = 0;
  double total = 0;
  double hourly_rate = 0;        // what the group's current allocations cost per hour
  std::optional<double> tokens;  // services only, when counts are known
  std::optional<double> cost_per_million_tokens;  // total / tokens * 1e6, when tokens > 0
};

struct CostReport {
  CostDimension dimension = CostDimension::kTeam;
  TimePoint window_start{};
  TimePoint window_end{};
  std::string currency;
  std::vector<CostLine> lines;                   // by total, highest first; ties by name
  CostLine total;                                // named "total"
  std::vector<std::string> unpriced_gpu_models;  // charged at the default price
};

// Accrues each pod's cost (its requests x its prices x time held) over the part of [start, end
// or now) inside [window_start, now), groups by `dimension`, and, for services, joins
// `service_tokens` (tokens served in the window, by service name). REQUIRES: window_start <= now.
CostReport ComputeCost(std::string_view currency, const std::vector<CostPod>& pods,
                       CostDimension dimension, TimePoint window_start, TimePoint now,
                       const std::map<std::string, double>& service_tokens = {});

// Spend per step of one group.
struct CostSeriesLine {
  std::string name;
  std::vector<double> cost;  // one per step
  // Services only, when counts are known: tokens served in each step, and the step's cost per
  // million tokens (nullopt for a step without tokens).
  std::optional<std::vector<double>> tokens;
  std::optional<std::vector<std::optional<double>>> cost_per_million_tokens;
};

// Spend over time: steps of `step` from `first` (the last one ends at the report's end, so it
// may be partial), one line per group, in the order of the report's lines.
struct CostSeries {
  Duration step{};
  std::vector<TimePoint> starts;  // each step's start
  std::vector<CostSeriesLine> lines;
};

// The start of the step of length `step` that holds `at`: steps fall on multiples of `step`
// since the Unix epoch, so 1h steps start on the hour and 1d steps at midnight UTC.
// REQUIRES: step > 0.
TimePoint StepStart(TimePoint at, Duration step);

// Spend per step of `step` over [window_start, now), grouped by `dimension` (the same groups as
// ComputeCost over that window, whose totals are the sums of the steps). `tokens_between`
// (services; may be empty: unknown) gives the tokens served in [from, to) by service.
// REQUIRES: window_start == StepStart(window_start, step), window_start < now, step > 0.
CostSeries ComputeCostSeries(
    const std::vector<CostPod>& pods, CostDimension dimension, TimePoint window_start,
    TimePoint now, Duration step,
    const std::function<std::map<std::string, double>(TimePoint, TimePoint)>& tokens_between);

// The report as the cost API sends it: {by, windowStart, windowEnd (RFC 3339), currency,
// lines: [{name, pods, gpuHours, gpuCost, cpuCost, memoryCost, total, hourlyRate, tokens?,
// costPerMillionTokens?}], total: {...}, unpricedGpuModels}.
nlohmann::json CostReportToJson(const CostReport& report);

// The series as the cost API sends it, under the report's `series`: {step (seconds), starts
// (RFC 3339), lines: [{name, cost: [...], tokens?: [...], costPerMillionTokens?: [... or null]}]}.
nlohmann::json CostSeriesToJson(const CostSeries& series);

// Appends strata_cost_hourly_rate{by,name,currency} (current allocations, per hour) and
// strata_cost_accrued{by,name,currency,window} (over the window) for each report, and
// strata_cost_per_million_tokens{service,currency} from a service report; only the families
// `wanted` includes.
void RenderCostMetrics(const std::vector<CostReport>& reports, std::string& out,
                       const metrics::FamilySelection& wanted = metrics::FamilySelection());

// The names of the families RenderCostMetrics renders, in its order.
std::vector<std::string> CostMetricFamilies();

}  // namespace strata::observe
