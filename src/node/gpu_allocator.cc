#include "node/gpu_allocator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "api/annotations.h"
#include "api/pod_contract.h"

namespace strata::node {
namespace {

using nlohmann::json;

// The kubelet's admission wording around a device manager error.
Status AdmissionError(const std::string& cause) {
  return FailedPreconditionError(
      fmt::format("Allocate failed due to {}, which is unexpected", cause));
}

const api::NodeGpu* FindGpu(const api::Node& node, int64_t index) {
  for (const api::NodeGpu& gpu : node.status.gpus) {
    if (gpu.index == index) return &gpu;
  }
  return nullptr;
}

}  // namespace

std::set<std::string> UnhealthyGpuUuids(const api::Node& node) {
  std::set<std::string> unhealthy;
  auto found = node.metadata.annotations.find(api::kGpuHealthAnnotation);
  if (found == node.metadata.annotations.end()) return unhealthy;
  json health = json::parse(found->second, nullptr, /*allow_exceptions=*/false);
  if (!health.is_array()) return unhealthy;
  for (const json& entry : health) {
    if (!entry.is_object() || !entry.contains("uuid") || !entry["uuid"].is_string()) continue;
    if (entry.contains("healthy") && entry["healthy"] == false) {
      unhealthy.insert(entry["uuid"].get<std::string>());
    }
  }
  return unhealthy;
}

bool AllocatableGpu(const api::NodeGpu& gpu, const std::set<std::string>& unhealthy) {
  return !gpu.mig_enabled && (gpu.uuid.empty() || unhealthy.count(gpu.uuid) == 0);
}

std::string GpuResourceId(const api::NodeGpu& gpu) {
  return gpu.uuid.empty() ? std::to_string(gpu.index) : gpu.uuid;
}

std::string AllocatedGpusAnnotation(const api::Node& node, const std::vector<int64_t>& indices) {
  const std::set<std::string> unhealthy = UnhealthyGpuUuids(node);
  json out = json::array();
  for (int64_t index : indices) {
    const api::NodeGpu* gpu = FindGpu(node, index);
    if (gpu == nullptr) {
      out.push_back({{"resourceID", std::to_string(index)}, {"health", "Unknown"}});
      continue;
    }
    out.push_back({{"resourceID", GpuResourceId(*gpu)},
                   {"health", unhealthy.count(gpu->uuid) > 0 ? "Unhealthy" : "Healthy"}});
  }
  return out.dump();
}

Result<std::vector<int64_t>> ParseAllocatedGpus(const api::Node& node, const std::string& text) {
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const std::string& why) {
    return Err(
        InvalidArgumentError(fmt::format("annotation {}: {}", api::kAllocatedGpusAnnotation, why)));
  };
  if (!parsed.is_array()) return bad("not a JSON array");
  std::vector<int64_t> indices;
  for (const json& entry : parsed) {
    if (!entry.is_object() || !entry.contains("resourceID") || !entry["resourceID"].is_string()) {
      return bad("an entry without a resourceID");
    }
    const std::string id = entry["resourceID"].get<std::string>();
    auto gpu = std::find_if(node.status.gpus.begin(), node.status.gpus.end(),
                            [&](const api::NodeGpu& each) { return GpuResourceId(each) == id; });
    if (gpu == node.status.gpus.end()) {
      return bad(fmt::format("GPU \"{}\" is not a GPU of node {}", id, node.metadata.name));
    }
    indices.push_back(gpu->index);
  }
  return indices;
}

api::Environment GpuVisibilityEnv(const api::Node* node, const std::vector<int64_t>& indices) {
  std::vector<std::string> ids;
  for (int64_t index : indices) {
    const api::NodeGpu* gpu = node != nullptr ? FindGpu(*node, index) : nullptr;
    ids.push_back(gpu != nullptr ? GpuResourceId(*gpu) : std::to_string(index));
  }
  return {
      {"CUDA_VISIBLE_DEVICES", fmt::format("{}", fmt::join(indices, ","))},
      {"NVIDIA_VISIBLE_DEVICES", ids.empty() ? "void" : fmt::format("{}", fmt::join(ids, ","))}};
}

Result<std::vector<int64_t>> PickGpus(const api::Node& node, const std::set<int64_t>& held,
                                      int64_t count) {
  if (node.status.gpus.empty()) {
    return Err(AdmissionError(
        fmt::format("cannot allocate unregistered device {}", api::kGpuResourceName)));
  }
  // Free GPUs by NVLink island, each island's in ascending index.
  std::map<int64_t, std::vector<int64_t>> free_by_island;
  int64_t healthy = 0;
  int64_t available = 0;
  std::vector<api::NodeGpu> gpus = node.status.gpus;
  std::sort(gpus.begin(), gpus.end(),
            [](const api::NodeGpu& a, const api::NodeGpu& b) { return a.index < b.index; });
  const std::set<std::string> unhealthy = UnhealthyGpuUuids(node);
  for (const api::NodeGpu& gpu : gpus) {
    if (!AllocatableGpu(gpu, unhealthy)) continue;
    ++healthy;
    if (held.count(gpu.index) > 0) continue;
    free_by_island[gpu.nvlink_island].push_back(gpu.index);
    ++available;
  }
  if (healthy == 0) {
    return Err(AdmissionError(
        fmt::format("no healthy devices present; cannot allocate unhealthy devices {}",
                    api::kGpuResourceName)));
  }
  if (available < count) {
    return Err(AdmissionError(
        fmt::format("requested number of devices unavailable for {}. Requested: {}, Available: {}",
                    api::kGpuResourceName, count, available)));
  }
  // One island when one has room: the tightest fit, then the lowest first GPU.
  const std::vector<int64_t>* best = nullptr;
  for (const auto& [island, free] : free_by_island) {
    if (static_cast<int64_t>(free.size()) < count) continue;
    if (best == nullptr || free.size() < best->size() ||
        (free.size() == best->size() && free.front() < best->front())) {
      best = &free;
    }
  }
  if (best != nullptr) return std::vector<int64_t>(best->begin(), best->begin() + count);
  // Else the fewest islands: the roomiest first (ties: the lowest first GPU).
  std::vector<const std::vector<int64_t>*> islands;
  for (const auto& [island, free] : free_by_island) islands.push_back(&free);
  std::stable_sort(islands.begin(), islands.end(), [](const auto* a, const auto* b) {
    return a->size() != b->size() ? a->size() > b->size() : a->front() < b->front();
  });
  std::vector<int64_t> picked;
  for (const std::vector<int64_t>* free : islands) {
    for (int64_t index : *free) {
      if (static_cast<int64_t>(picked.size()) == count) break;
      picked.push_back(index);
    }
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

Result<int64_t> RequestedGpus(const api::Pod& pod) {
  if (const std::string* share = api::PodAnnotation(pod, api::kGpuShareRequestAnnotation)) {
    return Err(InvalidArgumentError(fmt::format(
        "the container asks for a share of a GPU ({}): strata's virtual kubelet gives pods "
        "whole GPUs ({}) and has no allocator for shares of GPUs to pods it did not make",
        *share, api::kGpuResourceName)));
  }
  const Quantity& gpus = pod.spec.resources.gpu;
  if (gpus.milli() % 1000 != 0 || gpus.milli() < 0) {
    return Err(InvalidArgumentError(fmt::format(
        "{} {} is not a whole number of GPUs; strata's virtual kubelet gives pods whole GPUs",
        api::kGpuResourceName, gpus.ToString())));
  }
  return gpus.milli() / 1000;
}

const std::vector<int64_t>* GpuAllocator::HeldBy(const std::string& uid) const {
  auto found = held_.find(uid);
  return found == held_.end() ? nullptr : &found->second.indices;
}

void GpuAllocator::Restore(const std::string& uid, const std::string& node,
                           std::vector<int64_t> indices) {
  held_[uid] = Holding{node, std::move(indices)};
}

Result<std::vector<int64_t>> GpuAllocator::Allocate(const std::string& uid, const api::Node& node,
                                                    int64_t count,
                                                    const std::set<int64_t>& also_held) {
  if (const std::vector<int64_t>* own = HeldBy(uid)) return *own;
  if (count <= 0) return std::vector<int64_t>();
  std::set<int64_t> held = also_held;
  for (const auto& [other, holding] : held_) {
    if (holding.node == node.metadata.name)
      held.insert(holding.indices.begin(), holding.indices.end());
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> picked, PickGpus(node, held, count));
  held_[uid] = Holding{node.metadata.name, picked};
  return picked;
}

void GpuAllocator::Release(const std::string& uid) { held_.erase(uid); }

void GpuAllocator::Retain(const std::set<std::string>& live) {
  std::erase_if(held_, [&](const auto& entry) { return live.count(entry.first) == 0; });
}

}  // namespace strata::node
