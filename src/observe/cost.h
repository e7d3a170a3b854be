#pragma once

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

// One pod's allocation over time: what it requested and when it held it.
struct CostPod {
  std::string name;
  std::string namespace_name;
  std::map<std::string, std::string> labels;
  std::string queue;      // the Queue (cluster queue), as GpuHolder::queue
  std::string job;        // owning Job, or empty
  std::string service;    // owning Service, or empty
  std::string gpu_model;  // of the GPUs it holds; empty when it holds none
  double gpus = 0;        // GPUs held (fractional shares summed)
  double cpu_cores = 0;
  double memory_gib = 0;
  TimePoint start{};             // bound to its node
  std::optional<TimePoint> end;  // released; nullopt while it still holds its resources
};

// What cost rolls up by.
enum class CostDimension { kPod, kTeam, kProject, kQueue, kJob, kService };

// "pod", "team", "project", "queue", "job", "service". InvalidArgument listing the choices
// for anything else.
Result<CostDimension> ParseCostDimension(std::string_view text);
std::string_view CostDimensionName(CostDimension dimension);

// The group of pods without a value for the dimension (OpenCost's word for it).
inline constexpr std::string_view kUnallocated = "__unallocated__";

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

// Accrues each pod's cost over the part of [start, end or now) inside [window_start, now),
// groups by `dimension`, and, for services, joins `service_tokens` (tokens served in the
// window, by service name). REQUIRES: window_start <= now.
CostReport ComputeCost(const PriceTable& prices, const std::vector<CostPod>& pods,
                       CostDimension dimension, TimePoint window_start, TimePoint now,
                       const std::map<std::string, double>& service_tokens = {});

// The report as the cost API sends it: {by, windowStart, windowEnd (RFC 3339), currency,
// lines: [{name, pods, gpuHours, gpuCost, cpuCost, memoryCost, total, hourlyRate, tokens?,
// costPerMillionTokens?}], total: {...}, unpricedGpuModels}.
nlohmann::json CostReportToJson(const CostReport& report);

// Appends strata_cost_hourly_rate{by,name,currency} (current allocations, per hour) and
// strata_cost_accrued{by,name,currency,window} (over the window) for each report, and
// strata_cost_per_million_tokens{service,currency} from a service report; only the families
// `wanted` includes.
void RenderCostMetrics(const std::vector<CostReport>& reports, std::string& out,
                       const metrics::FamilySelection& wanted = metrics::FamilySelection());

// The names of the families RenderCostMetrics renders, in its order.
std::vector<std::string> CostMetricFamilies();

}  // namespace strata::observe
