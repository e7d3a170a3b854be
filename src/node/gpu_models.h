#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace strata::node {

// A GPU model that the simulated inventory can produce, with the figures a scheduler needs.
// The table is fixed at compile time; entries are immutable and safe to share across threads.
struct GpuModel {
  std::string_view name;          // the spec's spelling: "H100-80GB"
  std::string_view product_name;  // what NVML would report: "NVIDIA H100 80GB HBM3"
  int64_t memory_bytes;
  // GPUs per NVLink domain on a typical board (8 for an HGX/SXM baseboard with NVSwitch); 1 for
  // PCIe cards without NVLink, which makes every GPU its own island.
  int nvlink_domain_size;
};

// Every known model, sorted by name.
std::span<const GpuModel> KnownGpuModels();

// Returns the model named `name` (exact, case-sensitive spelling from KnownGpuModels()), or
// nullptr when there is none.
const GpuModel* FindGpuModel(std::string_view name);

// "A100-40GB, A100-80GB, ..." for error messages.
std::string KnownGpuModelNames();

}  // namespace strata::node
