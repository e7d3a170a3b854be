#include "scheduler/capacity_ceiling.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "common/quantity.h"

namespace strata::scheduler {
namespace {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
// The most instances MIG cuts one GPU into (1g profiles of an A100 or H100).
constexpr int64_t kMaxMigInstancesPerGpu = 7;

// `a` * `b`, saturated at kUnbounded (operands are not negative).
int64_t SaturatingProduct(int64_t a, int64_t b) {
  int64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? kUnbounded : product;
}

int64_t SaturatingSum(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? kUnbounded : sum;
}

std::string Cpu(int64_t milli) {
  return milli % 1000 == 0 ? fmt::format("{} CPU", milli / 1000) : fmt::format("{}m CPU", milli);
}

std::string Memory(int64_t bytes) {
  return Quantity::FromUnits(bytes, Quantity::Format::kBinarySI).ToString() + " memory";
}

// "8 GPUs, 16 CPU, 64Gi memory": what one pod of the set asks for.
std::string DescribePod(const PodSet& pod_set) {
  std::vector<std::string> parts;
  const GpuRequest& gpu = pod_set.gpu;
  if (gpu.IsWhole()) {
    parts.push_back(fmt::format("{} GPU{}", gpu.count, gpu.count == 1 ? "" : "s"));
  } else if (gpu.IsMig()) {
    parts.push_back("a MIG " + gpu.mig_profile + " instance");
  } else if (gpu.IsShare()) {
    parts.push_back(gpu.milli > 0 ? fmt::format("{}m of a GPU", gpu.milli)
                                  : fmt::format("{}Mi of a GPU's memory", gpu.memory_mib));
  }
  if (pod_set.cpu_milli > 0) parts.push_back(Cpu(pod_set.cpu_milli));
  if (pod_set.memory_bytes > 0) parts.push_back(Memory(pod_set.memory_bytes));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

int64_t CapacityCeiling::NodeShape::PodsPerNode(const PodSet& pod_set) const {
  int64_t pods = kUnbounded;
  if (pod_set.cpu_milli > 0) pods = std::min(pods, cpu_milli / pod_set.cpu_milli);
  if (pod_set.memory_bytes > 0) pods = std::min(pods, memory_bytes / pod_set.memory_bytes);
  const GpuRequest& gpu = pod_set.gpu;
  if (gpu.IsWhole()) {
    pods = std::min(pods, gpus / gpu.count);
  } else if (gpu.IsMig()) {
    pods = std::min(pods, gpus * kMaxMigInstancesPerGpu);
  } else if (gpu.IsShare()) {
    int64_t per_gpu = kUnbounded;
    if (gpu.milli > 0) per_gpu = std::min(per_gpu, 1000 / gpu.milli);
    if (gpu.memory_mib > 0) per_gpu = std::min(per_gpu, gpu_memory_mib / gpu.memory_mib);
    pods = std::min(pods, SaturatingProduct(gpus, per_gpu));
  }
  if (gpu.Any() && gpu.min_memory_mib > gpu_memory_mib) pods = 0;
  return pods;
}

CapacityCeiling::CapacityCeiling(const Cluster& cluster) {
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, int64_t> counts;
  for (const Node& node : cluster.nodes) {
    int64_t gpu_memory = 0;
    for (const Gpu& gpu : node.gpus) gpu_memory = std::max(gpu_memory, gpu.memory_mib);
    const auto gpus = static_cast<int64_t>(node.gpus.size());
    ++counts[{node.cpu_milli, node.memory_bytes, gpus, gpu_memory}];
    ++nodes_;
    cpu_milli_ = SaturatingSum(cpu_milli_, node.cpu_milli);
    memory_bytes_ = SaturatingSum(memory_bytes_, node.memory_bytes);
    gpus_ += gpus;
  }
  for (const auto& [shape, nodes] : counts) {
    const auto& [cpu, memory, gpus, gpu_memory] = shape;
    shapes_.push_back({cpu, memory, gpus, gpu_memory, nodes});
  }
}

std::string CapacityCeiling::NeverFits(const Workload& workload) const {
  if (nodes_ == 0) return "";
  const std::string nodes = fmt::format("its {} node{}", nodes_, nodes_ == 1 ? "" : "s");
  int64_t cpu = 0;
  int64_t memory = 0;
  int64_t gpus = 0;
  for (const PodSet& pod_set : workload.pod_sets) {
    int64_t room = 0;
    for (const NodeShape& shape : shapes_) {
      room = SaturatingSum(room, SaturatingProduct(shape.PodsPerNode(pod_set), shape.nodes));
    }
    if (pod_set.count > room) {
      return fmt::format(
          "can never fit this cluster: {} pod{} of {}{}; with nothing else running, {} hold{} {}",
          pod_set.count, pod_set.count == 1 ? "" : "s", DescribePod(pod_set),
          pod_set.count == 1 ? "" : " each", nodes, nodes_ == 1 ? "s" : "",
          room == 0 ? "none" : fmt::format("at most {}", room));
    }
    cpu = SaturatingSum(cpu, SaturatingProduct(pod_set.count, pod_set.cpu_milli));
    memory = SaturatingSum(memory, SaturatingProduct(pod_set.count, pod_set.memory_bytes));
    if (pod_set.gpu.IsWhole()) {
      gpus = SaturatingSum(gpus, SaturatingProduct(pod_set.count, pod_set.gpu.count));
    }
  }
  // Pod sets that each fit may still not fit together.
  if (gpus > gpus_) {
    return fmt::format("can never fit this cluster: its pods need {} GPUs in all; {} have {}", gpus,
                       nodes, gpus_);
  }
  if (cpu > cpu_milli_) {
    return fmt::format("can never fit this cluster: its pods need {} in all; {} have {}", Cpu(cpu),
                       nodes, Cpu(cpu_milli_));
  }
  if (memory > memory_bytes_) {
    return fmt::format("can never fit this cluster: its pods need {} in all; {} have {}",
                       Memory(memory), nodes, Memory(memory_bytes_));
  }
  return "";
}

}  // namespace strata::scheduler
