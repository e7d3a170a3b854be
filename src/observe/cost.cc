#include "observe/cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "common/check.h"
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
      if (pod.job.empty() || pod.namespace_name.empty()) return pod.job;
      return pod.namespace_name + "/" + pod.job;
    case CostDimension::kService:
      return pod.service;
  }
  return "";
}

double Hours(Duration duration) {
  return std::chrono::duration<double, std::ratio<3600>>(duration).count();
}

// What the allocation costs per hour of holding it.
double HourlyRate(const CostPod& pod) {
  return pod.gpus * pod.prices.gpu_hour + pod.cpu_cores * pod.prices.cpu_core_hour +
         pod.memory_gib * pod.prices.memory_gib_hour;
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

UnitPrices PricesFor(const PriceTable& prices, std::string_view gpu_model) {
  UnitPrices unit;
  unit.cpu_core_hour = prices.cpu_core_hour;
  unit.memory_gib_hour = prices.memory_gib_hour;
  unit.gpu_hour = prices.default_gpu_hour;
  if (!gpu_model.empty()) {
    auto price = prices.gpu_hour.find(std::string(gpu_model));
    unit.gpu_priced = price != prices.gpu_hour.end();
    if (unit.gpu_priced) unit.gpu_hour = price->second;
  }
  return unit;
}

CostReport ComputeCost(std::string_view currency, const std::vector<CostPod>& pods,
                       CostDimension dimension, TimePoint window_start, TimePoint now,
                       const std::map<std::string, double>& service_tokens) {
  CostReport report;
  report.dimension = dimension;
  report.window_start = window_start;
  report.window_end = now;
  report.currency = currency;
  std::map<std::string, CostLine> groups;
  std::set<std::string> unpriced;
  for (const CostPod& pod : pods) {
    TimePoint end = pod.end.value_or(now);
    TimePoint from = std::max(pod.start, window_start);
    TimePoint to = std::min(end, now);
    bool holding = !pod.end.has_value() && pod.start <= now;
    if (to <= from && !holding) continue;
    double hours = to > from ? Hours(to - from) : 0.0;
    if (pod.gpus > 0 && !pod.prices.gpu_priced) unpriced.insert(pod.gpu_model);
    CostLine part;
    part.pods = pod.pods;
    part.gpu_hours = pod.gpus * hours;
    part.gpu_cost = part.gpu_hours * pod.prices.gpu_hour;
    part.cpu_cost = pod.cpu_cores * hours * pod.prices.cpu_core_hour;
    part.memory_cost = pod.memory_gib * hours * pod.prices.memory_gib_hour;
    part.total = part.gpu_cost + part.cpu_cost + part.memory_cost;
    if (holding) part.hourly_rate = HourlyRate(pod);
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

TimePoint StepStart(TimePoint at, Duration step) {
  STRATA_CHECK(step > Duration::zero());
  Duration since_epoch = at.time_since_epoch();
  Duration into_step = since_epoch % step;
  if (into_step < Duration::zero()) into_step += step;
  return at - into_step;
}

CostSeries ComputeCostSeries(
    const std::vector<CostPod>& pods, CostDimension dimension, TimePoint window_start,
    TimePoint now, Duration step,
    const std::function<std::map<std::string, double>(TimePoint, TimePoint)>& tokens_between) {
  STRATA_CHECK(step > Duration::zero() && window_start < now);
  STRATA_CHECK(StepStart(window_start, step) == window_start);
  CostSeries series;
  series.step = step;
  for (TimePoint at = window_start; at < now; at += step) series.starts.push_back(at);
  const size_t steps = series.starts.size();
  std::map<std::string, std::vector<double>> costs;
  for (const CostPod& pod : pods) {
    TimePoint from = std::max(pod.start, window_start);
    TimePoint to = std::min(pod.end.value_or(now), now);
    bool holding = !pod.end.has_value() && pod.start <= now;
    if (to <= from && !holding) continue;  // as ComputeCost: outside the window
    std::string group = GroupOf(pod, dimension);
    if (group.empty()) group = kUnallocated;
    std::vector<double>& line = costs[group];
    line.resize(steps, 0.0);
    const double rate = HourlyRate(pod);
    // Only the steps the allocation overlaps: the work grows with allocations x their length in
    // steps, not with allocations x steps.
    for (size_t i = static_cast<size_t>((StepStart(from, step) - window_start) / step);
         from < to && i < steps; ++i) {
      TimePoint step_end = std::min(series.starts[i] + step, now);
      TimePoint overlap_from = std::max(from, series.starts[i]);
      TimePoint overlap_to = std::min(to, step_end);
      if (overlap_to > overlap_from) line[i] += rate * Hours(overlap_to - overlap_from);
      if (step_end >= to) break;
    }
  }
  std::vector<std::pair<std::string, std::vector<double>>> ordered(costs.begin(), costs.end());
  auto sum = [](const std::vector<double>& values) {
    double total = 0;
    for (double value : values) total += value;
    return total;
  };
  std::stable_sort(ordered.begin(), ordered.end(), [&](const auto& a, const auto& b) {
    double ta = sum(a.second), tb = sum(b.second);
    return ta != tb ? ta > tb : a.first < b.first;
  });
  std::vector<std::map<std::string, double>> tokens;
  if (dimension == CostDimension::kService && tokens_between) {
    for (size_t i = 0; i < steps; ++i) {
      tokens.push_back(tokens_between(series.starts[i], std::min(series.starts[i] + step, now)));
    }
  }
  for (auto& [name, cost] : ordered) {
    CostSeriesLine line;
    line.name = name;
    line.cost = std::move(cost);
    // Counts are known for a service that served tokens in any step of the window (a service
    // that served none is absent from every step's counts).
    const bool counted = std::any_of(tokens.begin(), tokens.end(), [&](const auto& step_tokens) {
      return step_tokens.count(name);
    });
    if (counted) {
      line.tokens.emplace();
      line.cost_per_million_tokens.emplace();
      for (size_t i = 0; i < steps; ++i) {
        auto served = tokens[i].find(name);
        double count = served == tokens[i].end() ? 0.0 : served->second;
        line.tokens->push_back(count);
        line.cost_per_million_tokens->push_back(
            count > 0 ? std::optional<double>(line.cost[i] / count * 1e6) : std::nullopt);
      }
    }
    series.lines.push_back(std::move(line));
  }
  return series;
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

nlohmann::json CostSeriesToJson(const CostSeries& series) {
  nlohmann::json starts = nlohmann::json::array();
  for (TimePoint start : series.starts) starts.push_back(FormatRfc3339(start));
  nlohmann::json lines = nlohmann::json::array();
  for (const CostSeriesLine& line : series.lines) {
    nlohmann::json json = {{"name", line.name}, {"cost", line.cost}};
    if (line.tokens) json["tokens"] = *line.tokens;
    if (line.cost_per_million_tokens) {
      nlohmann::json per_million = nlohmann::json::array();
      for (const std::optional<double>& value : *line.cost_per_million_tokens) {
        per_million.push_back(value ? nlohmann::json(*value) : nlohmann::json());
      }
      json["costPerMillionTokens"] = std::move(per_million);
    }
    lines.push_back(std::move(json));
  }
  return {{"step", std::chrono::duration<double>(series.step).count()},
          {"starts", std::move(starts)},
          {"lines", std::move(lines)}};
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
