#include "observe/gpu_top.h"

#include <cmath>

#include "metrics/prometheus_text.h"

namespace strata::observe {
namespace {

std::string Percent(double share) {
  return std::to_string(static_cast<int64_t>(std::lround(share * 100))) + "%";
}

}  // namespace

Result<GpuReadingsByUuid> UtilisationFromMetrics(std::string_view page) {
  ASSIGN_OR_RETURN(std::vector<metrics::Sample> samples, metrics::ParsePrometheusText(page));
  GpuReadingsByUuid readings;
  for (const metrics::Sample& sample : samples) {
    if (sample.name != "DCGM_FI_DEV_GPU_UTIL") continue;
    const std::string* uuid = sample.Label("UUID");
    if (uuid != nullptr) readings[*uuid].utilization_percent = sample.value;
  }
  return readings;
}

std::vector<std::string> GpuTopHeader() {
  return {"NODE", "GPU", "MODEL", "ALLOC%", "BUSY%", "HELD BY"};
}

std::vector<std::vector<std::string>> GpuTopRows(const std::vector<GpuSample>& samples) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(samples.size());
  for (const GpuSample& sample : samples) {
    GpuUse use = UseOf(sample);
    std::string holders;
    for (const GpuHolder& holder : sample.holders) {
      if (!holders.empty()) holders += ',';
      holders += holder.namespace_name + "/" + holder.pod;
    }
    rows.push_back({sample.hostname, std::to_string(sample.gpu), sample.model_name,
                    Percent(use.allocated), use.busy_known ? Percent(use.busy) : "-",
                    holders.empty() ? "-" : holders});
  }
  return rows;
}

}  // namespace strata::observe
