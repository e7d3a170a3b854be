#include "observe/gpu_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "metrics/prometheus_text.h"

namespace strata::observe {
namespace {

// Board power and SM clocks from the vendors' data sheets, matched by the model's prefix.
struct ModelFigures {
  std::string_view prefix;
  double max_power_watts;
  double idle_power_watts;
  double max_sm_clock_mhz;
  double idle_sm_clock_mhz;
};

constexpr ModelFigures kModelFigures[] = {
    {"B200", 1000, 140, 1965, 345}, {"H200", 700, 80, 1980, 345}, {"H100", 700, 70, 1980, 345},
    {"A100", 400, 50, 1410, 210},   {"L40S", 350, 35, 2520, 210}, {"L4", 72, 16, 2040, 210},
};
constexpr ModelFigures kGenericFigures = {"", 300, 30, 1500, 300};

const ModelFigures& FiguresFor(std::string_view model) {
  for (const ModelFigures& figures : kModelFigures) {
    if (model.substr(0, figures.prefix.size()) == figures.prefix) return figures;
  }
  return kGenericFigures;
}

// How busy a running holder keeps its share: as measured, else as its kind typically does (a
// training step saturates the GPU between collectives; an inference engine idles between
// batches).
double Activity(const GpuHolder& holder) {
  if (holder.activity) return std::clamp(*holder.activity, 0.0, 1.0);
  if (!holder.job.empty()) return 0.92;
  if (!holder.service.empty()) return 0.55;
  return 0.75;
}

constexpr double kBytesPerMib = 1024.0 * 1024.0;

struct DcgmFamily {
  std::string_view name;
  std::string_view type;
  std::string_view help;
  double GpuReading::*field;
};

// Help texts as dcgm-exporter's default counters file words them.
constexpr DcgmFamily kDcgmFamilies[] = {
    {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", &GpuReading::sm_clock_mhz},
    {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", &GpuReading::temperature_celsius},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", &GpuReading::power_watts},
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", &GpuReading::utilization_percent},
    {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", &GpuReading::fb_free_mib},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", &GpuReading::fb_used_mib},
    {"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.",
     &GpuReading::last_xid},
    {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors.",
     &GpuReading::ecc_sbe_volatile},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors.",
     &GpuReading::ecc_dbe_volatile},
};

// The strata_gpu_* roll-ups of RenderGpuMetrics, in the order rendered.
enum class RollUpFigure { kCapacity, kAllocated, kBusy, kAllocatedRatio, kBusyRatio };

struct RollUpFamily {
  std::string_view name;
  std::string_view help;
  RollUpFigure figure;
};

constexpr RollUpFamily kRollUpFamilies[] = {
    {"strata_gpu_capacity_gpus", "GPUs present, per cluster and node.", RollUpFigure::kCapacity},
    {"strata_gpu_allocated_gpus",
     "GPUs allocated to pods (fractional shares summed), per cluster, node, queue and team.",
     RollUpFigure::kAllocated},
    {"strata_gpu_busy_gpus",
     "GPUs' worth of measured utilisation (sum of utilisation/100, split by share), per "
     "cluster, node, queue and team.",
     RollUpFigure::kBusy},
    {"strata_gpu_allocated_ratio",
     "Share of GPUs allocated to pods: per GPU, of the node's and the cluster's GPUs, and of the "
     "cluster's GPUs per queue and team.",
     RollUpFigure::kAllocatedRatio},
    {"strata_gpu_busy_ratio",
     "Share of GPUs busy (measured utilisation): per GPU, of the node's and the cluster's GPUs, "
     "and of the cluster's GPUs per queue and team.",
     RollUpFigure::kBusyRatio},
};

void AppendLabel(std::string& out, std::string_view name, std::string_view value, bool first) {
  if (!first) out += ',';
  out += name;
  out += "=\"";
  out += metrics::EscapeLabelValue(value);
  out += '"';
}

// Several holders of one GPU: their values joined with ',', each distinct value once, in
// holder order.
std::string JoinHolders(const std::vector<GpuHolder>& holders, std::string GpuHolder::*field) {
  std::string joined;
  std::vector<std::string_view> seen;
  for (const GpuHolder& holder : holders) {
    const std::string& value = holder.*field;
    if (value.empty() || std::find(seen.begin(), seen.end(), value) != seen.end()) continue;
    seen.push_back(value);
    if (!joined.empty()) joined += ',';
    joined += value;
  }
  return joined;
}

// `{gpu="0",UUID="...",...}` for one GPU: built once, used by every family.
std::string GpuLabels(const GpuSample& sample) {
  std::string out = "{";
  AppendLabel(out, "gpu", std::to_string(sample.gpu), true);
  AppendLabel(out, "UUID", sample.uuid, false);
  AppendLabel(out, "device", "nvidia" + std::to_string(sample.gpu), false);
  AppendLabel(out, "modelName", sample.model_name, false);
  AppendLabel(out, "Hostname", sample.hostname, false);
  AppendLabel(out, "simulated", sample.simulated ? "true" : "false", false);
  AppendLabel(out, "namespace", JoinHolders(sample.holders, &GpuHolder::namespace_name), false);
  AppendLabel(out, "pod", JoinHolders(sample.holders, &GpuHolder::pod), false);
  // Not "job": Prometheus owns that label (the scrape job) and would rename ours exported_job,
  // breaking {job="..."} queries; dcgm-exporter users select the workload by pod and namespace.
  AppendLabel(out, "strata_job", JoinHolders(sample.holders, &GpuHolder::job), false);
  AppendLabel(out, "service", JoinHolders(sample.holders, &GpuHolder::service), false);
  AppendLabel(out, "queue", JoinHolders(sample.holders, &GpuHolder::queue), false);
  out += '}';
  return out;
}

void AppendHeader(std::string& out, std::string_view name, std::string_view type,
                  std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += metrics::EscapeHelp(help);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void RenderUsageFamily(const std::vector<GpuUsage>& usage, std::string_view name,
                       std::string_view help, double GpuUsage::*field, bool capacity_scopes_only,
                       std::string& out) {
  AppendHeader(out, name, "gauge", help);
  for (const GpuUsage& row : usage) {
    if (capacity_scopes_only && row.scope != "cluster" && row.scope != "node") continue;
    out += name;
    out += '{';
    AppendLabel(out, "scope", row.scope, true);
    AppendLabel(out, "name", row.name, false);
    out += "} ";
    out += metrics::FormatSampleValue(row.*field);
    out += '\n';
  }
}

// The capacity a row's shares are of: its own GPUs, or the cluster's for a queue or a team.
double RatioBase(const GpuUsage& row, double cluster_capacity) {
  return row.scope == "queue" || row.scope == "team" ? cluster_capacity : row.capacity;
}

// One row per GPU (scope "gpu"), then one per row of `usage`.
void RenderRatioFamily(const std::vector<GpuSample>& samples, const std::vector<GpuUsage>& usage,
                       std::string_view name, std::string_view help, bool busy, std::string& out) {
  AppendHeader(out, name, "gauge", help);
  auto line = [&](std::string_view scope, std::string_view row_name, double value) {
    out += name;
    out += '{';
    AppendLabel(out, "scope", scope, true);
    AppendLabel(out, "name", row_name, false);
    out += "} ";
    out += metrics::FormatSampleValue(value);
    out += '\n';
  };
  for (const GpuSample& sample : samples) {
    GpuUse use = UseOf(sample);
    if (busy && !use.busy_known) continue;
    line("gpu", sample.hostname + "/" + std::to_string(sample.gpu),
         busy ? use.busy : use.allocated);
  }
  double cluster_capacity = usage.empty() ? 0 : usage.front().capacity;
  for (const GpuUsage& row : usage) {
    line(row.scope, row.name,
         busy ? BusyRatio(row, cluster_capacity) : AllocatedRatio(row, cluster_capacity));
  }
}

}  // namespace

GpuReading SimulatedGpuReading(std::string_view model, int64_t memory_bytes,
                               const std::vector<GpuHolder>& holders) {
  const ModelFigures& figures = FiguresFor(model);
  double busy = 0;
  double used_bytes = 0;
  for (const GpuHolder& holder : holders) {
    double share = std::clamp(holder.share, 0.0, 1.0);
    if (!holder.running) continue;
    busy += share * Activity(holder);
    // An engine or a trainer fills what it reserved; a whole-GPU holder most of the memory.
    used_bytes += holder.memory_bytes > 0 ? static_cast<double>(holder.memory_bytes)
                                          : share * 0.9 * static_cast<double>(memory_bytes);
  }
  double utilization = std::round(std::min(1.0, busy) * 100.0);
  double total_mib = std::floor(static_cast<double>(memory_bytes) / kBytesPerMib);
  double used_mib = std::min(total_mib, std::floor(used_bytes / kBytesPerMib));
  GpuReading reading;
  reading.utilization_percent = utilization;
  reading.fb_used_mib = used_mib;
  reading.fb_free_mib = total_mib - used_mib;
  double load = utilization / 100.0;
  reading.power_watts = std::round((figures.idle_power_watts +
                                    (figures.max_power_watts - figures.idle_power_watts) * load) *
                                   10.0) /
                        10.0;
  reading.temperature_celsius = std::round(31.0 + 44.0 * load);
  reading.sm_clock_mhz = utilization > 0 ? figures.max_sm_clock_mhz : figures.idle_sm_clock_mhz;
  reading.last_xid = 0;
  reading.ecc_sbe_volatile = 0;
  reading.ecc_dbe_volatile = 0;
  return reading;
}

GpuUse UseOf(const GpuSample& sample) {
  GpuUse use;
  for (const GpuHolder& holder : sample.holders) use.allocated += std::max(0.0, holder.share);
  use.allocated = std::min(1.0, use.allocated);
  double utilization = sample.reading.utilization_percent;
  use.busy_known = !std::isnan(utilization);
  if (use.busy_known) use.busy = std::clamp(utilization, 0.0, 100.0) / 100.0;
  return use;
}

void SplitUseByHolder(
    const GpuSample& sample,
    const std::function<void(const GpuHolder& holder, double allocated, double busy)>& visit) {
  double held = 0;
  for (const GpuHolder& holder : sample.holders) held += std::max(0.0, holder.share);
  if (held <= 0) return;
  GpuUse use = UseOf(sample);
  for (const GpuHolder& holder : sample.holders) {
    if (holder.share <= 0) continue;
    double part = holder.share / held;
    visit(holder, use.allocated * part, use.busy * part);
  }
}

double AllocatedRatio(const GpuUsage& row, double cluster_capacity) {
  double base = RatioBase(row, cluster_capacity);
  return base > 0 ? row.allocated / base : 0;
}

double BusyRatio(const GpuUsage& row, double cluster_capacity) {
  double base = RatioBase(row, cluster_capacity);
  return base > 0 ? row.busy / base : 0;
}

std::vector<GpuUsage> SummariseGpuUsage(const std::vector<GpuSample>& samples) {
  GpuUsage cluster{"cluster", "", 0, 0, 0};
  std::map<std::string, GpuUsage> nodes;
  std::map<std::string, GpuUsage> queues;
  std::map<std::string, GpuUsage> teams;
  auto row = [](std::map<std::string, GpuUsage>& rows, std::string_view scope,
                const std::string& name) -> GpuUsage& {
    auto [it, added] = rows.try_emplace(name, GpuUsage{std::string(scope), name, 0, 0, 0});
    return it->second;
  };
  for (const GpuSample& sample : samples) {
    GpuUsage& node = row(nodes, "node", sample.hostname);
    node.capacity += 1;
    cluster.capacity += 1;
    GpuUse use = UseOf(sample);
    node.allocated += use.allocated;
    cluster.allocated += use.allocated;
    // Use on a GPU nobody holds is nobody's (a stray process): it counts for the node only.
    node.busy += use.busy;
    cluster.busy += use.busy;
    SplitUseByHolder(sample, [&](const GpuHolder& holder, double allocated, double busy) {
      if (!holder.queue.empty()) {
        GpuUsage& queue = row(queues, "queue", holder.queue);
        queue.allocated += allocated;
        queue.busy += busy;
      }
      if (!holder.team.empty()) {
        GpuUsage& team = row(teams, "team", holder.team);
        team.allocated += allocated;
        team.busy += busy;
      }
    });
  }
  std::vector<GpuUsage> usage{cluster};
  for (const auto* rows : {&nodes, &queues, &teams}) {
    for (const auto& [name, value] : *rows) usage.push_back(value);
  }
  return usage;
}

std::vector<std::string> GpuMetricFamilies() {
  std::vector<std::string> names;
  for (const DcgmFamily& family : kDcgmFamilies) names.emplace_back(family.name);
  for (const RollUpFamily& family : kRollUpFamilies) names.emplace_back(family.name);
  return names;
}

void RenderGpuMetrics(const std::vector<GpuSample>& samples, std::string& out,
                      const metrics::FamilySelection& wanted) {
  std::vector<std::string> labels;
  for (const DcgmFamily& family : kDcgmFamilies) {
    if (!wanted.Includes(family.name)) continue;
    if (labels.empty()) {
      labels.reserve(samples.size());
      for (const GpuSample& sample : samples) labels.push_back(GpuLabels(sample));
    }
    AppendHeader(out, family.name, family.type, family.help);
    for (size_t i = 0; i < samples.size(); ++i) {
      double value = samples[i].reading.*family.field;
      if (std::isnan(value)) continue;
      out += family.name;
      out += labels[i];
      out += ' ';
      out += metrics::FormatSampleValue(value);
      out += '\n';
    }
  }
  std::optional<std::vector<GpuUsage>> usage;
  for (const RollUpFamily& family : kRollUpFamilies) {
    if (!wanted.Includes(family.name)) continue;
    if (!usage) usage = SummariseGpuUsage(samples);
    switch (family.figure) {
      case RollUpFigure::kCapacity:
        RenderUsageFamily(*usage, family.name, family.help, &GpuUsage::capacity, true, out);
        break;
      case RollUpFigure::kAllocated:
        RenderUsageFamily(*usage, family.name, family.help, &GpuUsage::allocated, false, out);
        break;
      case RollUpFigure::kBusy:
        RenderUsageFamily(*usage, family.name, family.help, &GpuUsage::busy, false, out);
        break;
      case RollUpFigure::kAllocatedRatio:
        RenderRatioFamily(samples, *usage, family.name, family.help, false, out);
        break;
      case RollUpFigure::kBusyRatio:
        RenderRatioFamily(samples, *usage, family.name, family.help, true, out);
        break;
    }
  }
}

}  // namespace strata::observe
