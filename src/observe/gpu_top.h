#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "observe/cluster_gpus.h"
#include "observe/gpu_metrics.h"

// What `strata top nodes` shows: each GPU with who holds it and its allocation against its
// use. The CLI reads the nodes and pods from the REST API and the measured readings from the
// control plane's /metrics, so that it shows what Prometheus would. Pure functions; thread-safe.

namespace strata::observe {

// The utilisation of every GPU on a /metrics page, from its DCGM_FI_DEV_GPU_UTIL series, by
// the series' UUID label (other fields of the readings stay unknown). Returns the parser's
// InvalidArgument (naming the line) when the page is not Prometheus text.
Result<GpuReadingsByUuid> UtilisationFromMetrics(std::string_view page);

// The header of GpuTopRows: NODE, GPU, MODEL, ALLOC%, BUSY%, HELD BY.
std::vector<std::string> GpuTopHeader();

// One row per sample, in order: the node, the GPU index, the model, the share allocated and
// the utilisation as whole percents ("50%"; BUSY% "-" when the reading is unknown), and the
// holders as "NAMESPACE/POD" joined with ',' ("-" when free).
std::vector<std::vector<std::string>> GpuTopRows(const std::vector<GpuSample>& samples);

}  // namespace strata::observe
