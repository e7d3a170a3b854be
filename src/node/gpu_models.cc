#include "node/gpu_models.h"

#include <array>

namespace strata::node {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

// Memory as the marketing name says, in GiB; NVML reports slightly less on real boards, which
// only makes the simulation a little generous.
constexpr std::array<GpuModel, 11> kModels = {{
    {"A10-24GB", "NVIDIA A10", 24 * kGiB, 1},
    {"A100-40GB", "NVIDIA A100-SXM4-40GB", 40 * kGiB, 8},
    {"A100-80GB", "NVIDIA A100-SXM4-80GB", 80 * kGiB, 8},
    {"B200-180GB", "NVIDIA B200", 180 * kGiB, 8},
    {"H100-80GB", "NVIDIA H100 80GB HBM3", 80 * kGiB, 8},
    {"H100-NVL-94GB", "NVIDIA H100 NVL", 94 * kGiB, 2},
    {"H200-141GB", "NVIDIA H200", 141 * kGiB, 8},
    {"L4-24GB", "NVIDIA L4", 24 * kGiB, 1},
    {"L40S", "NVIDIA L40S", 48 * kGiB, 1},
    {"RTX4090-24GB", "NVIDIA GeForce RTX 4090", 24 * kGiB, 1},
    {"T4-16GB", "Tesla T4", 16 * kGiB, 1},
}};

}  // namespace

std::span<const GpuModel> KnownGpuModels() { return kModels; }

const GpuModel* FindGpuModel(std::string_view name) {
  for (const GpuModel& model : kModels) {
    if (model.name == name) return &model;
  }
  return nullptr;
}

std::string KnownGpuModelNames() {
  std::string names;
  for (const GpuModel& model : kModels) {
    if (!names.empty()) names += ", ";
    names += model.name;
  }
  return names;
}

}  // namespace strata::node
