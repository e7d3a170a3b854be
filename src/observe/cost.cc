#include "observe/cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "common/field_decoder.h"
#include "common/yaml_json.h"
#include "metrics/prometheus_text.h"

namespace strata::observe {
namespace {

constexpr std::string_view kHourlyRateFamily = "strata_cost_hourly_rate";
constexpr std::string_view kAccruedFamily = "strata_cost_accrued";
constexpr std::string_view kPerMillionTokensFamily = "strata_cost_per_million_tokens";

constexpr std::string_view kDimensionNames[] = {"pod",   "team", "project",
                                                "queue", "job",  "service"};

std::string GroupOf(const CostPod& pod, CostDimension dimension) {
  auto label = [&](const char* key) {
    auto it = pod.labels.find(key);
    return it == pod.labels.end() ? std::string() : it->second;
  };
  switch (dimension) {
    case CostDimension::kPod:
      return pod.namespace_name.empty() ? pod.name : pod.namespace_name + "/" + pod.name;
    case CostDimension::kTeam:
      return label("team");
    case CostDimension::kProject:
      return label("project");
    case CostDimension::kQueue:
      return pod.queue;
    case CostDimension::kJob:
      return pod.job.empty() ? "" : pod.namespace_name + "/" + pod.job;
    case CostDimension::kService:
      return pod.service;
  }
  return "";
}

double Hours(Duration duration) {
  return std::chrono::duration<double, std::ratio<3600>>(duration).count();
}

void Accumulate(CostLine& line, const CostLine& part) {
  line.pods += part.pods;
  line.gpu_hours += part.gpu_hours;
  line.gpu_cost += part.gpu_cost;
  line.cpu_cost += part.cpu_cost;
  line.memory_cost += part.memory_cost;
  line.total += part.total;
  line.hourly_rate += part.hourly_rate;
}

nlohmann::json LineToJson(const CostLine& line) {
  nlohmann::json json = {{"name", line.name},          {"pods", line.pods},
                         {"gpuHours", line.gpu_hours}, {"gpuCost", line.gpu_cost},
                         {"cpuCost", line.cpu_cost},   {"memoryCost", line.memory_cost},
                         {"total", line.total},        {"hourlyRate", line.hourly_rate}};
  if (line.tokens) json["tokens"] = *line.tokens;
  if (line.cost_per_million_tokens) json["costPerMillionTokens"] = *line.cost_per_million_tokens;
  return json;
}

void AppendGauge(std::string& out, std::string_view name, std::string_view labels, double value) {
  out += name;
  out += '{';
  out += labels;
  out += "} ";
  out += metrics::FormatSampleValue(value);
  out += '\n';
}

}  // namespace

PriceTable DefaultPriceTable() {
  PriceTable prices;
  prices.gpu_hour = {{"B200-180GB", 5.00},    {"H200-141GB", 3.50}, {"H100-80GB", 2.50},
                     {"H100-NVL-94GB", 2.50}, {"A100-80GB", 1.50},  {"A100-40GB", 1.50},
                     {"L40S", 1.00},          {"A10-24GB", 0.75},   {"L4-24GB", 0.50}};
  prices.default_gpu_hour = 1.00;
  prices.cpu_core_hour = 0.03;
  prices.memory_gib_hour = 0.004;
  return prices;
}

Result<PriceTable> ParsePriceTable(std::string_view text, std::string_view source) {
  Result<PriceTable> prices = [&]() -> Result<PriceTable> {
    ASSIGN_OR_RETURN(std::vector<YamlDocument> documents, ParseYamlDocuments(text));
    if (documents.size() != 1 || !documents.front().value.is_object()) {
      return Err(InvalidArgumentError("expected one mapping of prices"));
    }
    ASSIGN_OR_RETURN(FieldDecoder root, FieldDecoder::Of(documents.front().value, "",
                                                         {"currency", "gpuHour", "defaultGpuHour",
                                                          "cpuCoreHour", "memoryGiBHour"}));
    PriceTable table;
    ASSIGN_OR_RETURN(table.currency, root.String("currency", table.currency));
    if (table.currency.empty()) {
      return Err(root.Error("currency", "must be a currency's name, such as \"USD\""));
    }
    ASSIGN_OR_RETURN(FieldDecoder gpu_hour, root.Mapping("gpuHour"));
    for (const std::string& model : gpu_hour.Keys()) {
      ASSIGN_OR_RETURN(table.gpu_hour[model], gpu_hour.Number(model, 0, 0));
    }
    ASSIGN_OR_RETURN(table.default_gpu_hour,
                     root.Number("defaultGpuHour", table.default_gpu_hour, 0));
    ASSIGN_OR_RETURN(table.cpu_core_hour, root.Number("cpuCoreHour", table.cpu_core_hour, 0));
    ASSIGN_OR_RETURN(table.memory_gib_hour, root.Number("memoryGiBHour", table.memory_gib_hour, 0));
    return table;
  }();
  if (!prices) return Err(prices.error().WithPrefix(source));
  return prices;
}

Result<PriceTable> ReadPriceTableFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  if (!file.is_open() || file.bad()) {
    return Err(InvalidArgumentError(
        fmt::format("price table {}: cannot be read ({})", path, std::strerror(errno))));
  }
  return ParsePriceTable(text.str(), path);
}

Result<CostDimension> ParseCostDimension(std::string_view text) {
  for (size_t i = 0; i < std::size(kDimensionNames); ++i) {
    if (text == kDimensionNames[i]) return static_cast<CostDimension>(i);
  }
  return Err(InvalidArgumentError(fmt::format(
      "cost by \"{}\": expected one of pod, team, project, queue, job, service", text)));
}

std::string_view CostDimensionName(CostDimension dimension) {
  return kDimensionNames[static_cast<size_t>(dimension)];
}

CostReport ComputeCost(const PriceTable& prices, const std::vector<CostPod>& pods,
                       CostDimension dimension, TimePoint window_start, TimePoint now,
                       const std::map<std::string, double>& service_tokens) {
  CostReport report;
  report.dimension = dimension;
  report.window_start = window_start;
  report.window_end = now;
  report.currency = prices.currency;
  std::map<std::string, CostLine> groups;
  std::set<std::string> unpriced;
  for (const CostPod& pod : pods) {
    TimePoint end = pod.end.value_or(now);
    TimePoint from = std::max(pod.start, window_start);
    TimePoint to = std::min(end, now);
    bool holding = !pod.end.has_value() && pod.start <= now;
    if (to <= from && !holding) continue;
    double hours = to > from ? Hours(to - from) : 0.0;
    double gpu_price = prices.default_gpu_hour;
    if (pod.gpus > 0) {
      auto price = prices.gpu_hour.find(pod.gpu_model);
      if (price != prices.gpu_hour.end()) {
        gpu_price = price->second;
      } else {
        unpriced.insert(pod.gpu_model);
      }
    }
    CostLine part;
    part.pods = 1;
    part.gpu_hours = pod.gpus * hours;
    part.gpu_cost = part.gpu_hours * gpu_price;
    part.cpu_cost = pod.cpu_cores * hours * prices.cpu_core_hour;
    part.memory_cost = pod.memory_gib * hours * prices.memory_gib_hour;
    part.total = part.gpu_cost + part.cpu_cost + part.memory_cost;
    if (holding) {
      part.hourly_rate = pod.gpus * gpu_price + pod.cpu_cores * prices.cpu_core_hour +
                         pod.memory_gib * prices.memory_gib_hour;
    }
    std::string group = GroupOf(pod, dimension);
    if (group.empty()) group = kUnallocated;
    CostLine& line = groups[group];
    line.name = group;
    Accumulate(line, part);
  }
  report.total.name = "total";
  for (auto& [name, line] : groups) {
    if (dimension == CostDimension::kService) {
      auto tokens = service_tokens.find(name);
      if (tokens != service_tokens.end()) {
        line.tokens = tokens->second;
        if (tokens->second > 0) line.cost_per_million_tokens = line.total / tokens->second * 1e6;
      }
    }
    Accumulate(report.total, line);
    report.lines.push_back(line);
  }
  std::sort(report.lines.begin(), report.lines.end(), [](const CostLine& a, const CostLine& b) {
    return a.total != b.total ? a.total > b.total : a.name < b.name;
  });
  report.unpriced_gpu_models.assign(unpriced.begin(), unpriced.end());
  return report;
}

nlohmann::json CostReportToJson(const CostReport& report) {
  nlohmann::json lines = nlohmann::json::array();
  for (const CostLine& line : report.lines) lines.push_back(LineToJson(line));
  return {{"by", CostDimensionName(report.dimension)},
          {"windowStart", FormatRfc3339(report.window_start)},
          {"windowEnd", FormatRfc3339(report.window_end)},
          {"currency", report.currency},
          {"lines", lines},
          {"total", LineToJson(report.total)},
          {"unpricedGpuModels", report.unpriced_gpu_models}};
}

std::vector<std::string> CostMetricFamilies() {
  return {std::string(kHourlyRateFamily), std::string(kAccruedFamily),
          std::string(kPerMillionTokensFamily)};
}

void RenderCostMetrics(const std::vector<CostReport>& reports, std::string& out,
                       const metrics::FamilySelection& wanted) {
  auto header = [&](std::string_view name, std::string_view help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, metrics::EscapeHelp(help), name);
  };
  if (wanted.Includes(kHourlyRateFamily)) {
    header(kHourlyRateFamily,
           "What current allocations cost per hour (requests x price), by dimension and group.");
    for (const CostReport& report : reports) {
      for (const CostLine& line : report.lines) {
        AppendGauge(
            out, kHourlyRateFamily,
            fmt::format("by=\"{}\",name=\"{}\",currency=\"{}\"",
                        CostDimensionName(report.dimension), metrics::EscapeLabelValue(line.name),
                        metrics::EscapeLabelValue(report.currency)),
            line.hourly_rate);
      }
    }
  }
  if (wanted.Includes(kAccruedFamily)) {
    header(kAccruedFamily,
           "Cost accrued over the report's window (requests x price x time held), by dimension "
           "and group.");
    for (const CostReport& report : reports) {
      double window_seconds =
          std::chrono::duration<double>(report.window_end - report.window_start).count();
      for (const CostLine& line : report.lines) {
        AppendGauge(
            out, kAccruedFamily,
            fmt::format("by=\"{}\",name=\"{}\",currency=\"{}\",window=\"{}s\"",
                        CostDimensionName(report.dimension), metrics::EscapeLabelValue(line.name),
                        metrics::EscapeLabelValue(report.currency),
                        metrics::FormatSampleValue(window_seconds)),
            line.total);
      }
    }
  }
  if (wanted.Includes(kPerMillionTokensFamily)) {
    header(kPerMillionTokensFamily,
           "Cost of a service over the window divided by the tokens it served, per million.");
    for (const CostReport& report : reports) {
      if (report.dimension != CostDimension::kService) continue;
      for (const CostLine& line : report.lines) {
        if (!line.cost_per_million_tokens) continue;
        AppendGauge(
            out, kPerMillionTokensFamily,
            fmt::format("service=\"{}\",currency=\"{}\"", metrics::EscapeLabelValue(line.name),
                        metrics::EscapeLabelValue(report.currency)),
            *line.cost_per_million_tokens);
      }
    }
  }
}

}  // namespace strata::observe
