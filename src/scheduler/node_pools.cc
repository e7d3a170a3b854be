#include "scheduler/node_pools.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "scheduler/placement_policy.h"

namespace strata::scheduler {

NodePools::NodePools(std::span<const GpuNodeFree> nodes, std::span<const int64_t> gpu_memory_mib) {
  using NodeKind = std::tuple<std::string, size_t, int64_t, int64_t>;
  std::map<NodeKind, int> pool_ids;
  pool_of_node_.reserve(nodes.size());
  for (const GpuNodeFree& node : nodes) {
    const NodeKind kind(node.gpu_model, node.gpu_milli.size(), node.cpu_milli, node.memory_mib);
    const auto [it, inserted] = pool_ids.emplace(kind, static_cast<int>(pool_ids.size()));
    if (inserted) {
      kinds_.push_back(node);
      gpus_.push_back(0);
    }
    gpus_[it->second] += static_cast<int64_t>(node.gpu_milli.size());
    pool_of_node_.push_back(it->second);
    if (!gpu_memory_mib.empty()) {
      gpu_memory_mib_.resize(kinds_.size(), 0);
      int64_t& memory = gpu_memory_mib_[it->second];
      memory = std::max(memory, gpu_memory_mib[pool_of_node_.size() - 1]);
    }
  }
  for (int pool = 0; pool < pool_count(); ++pool) {
    const GpuNodeFree& kind = kinds_[pool];
    hosts_gpu_pods_.push_back(GpuMilliLeft(kind) > 0);
    if (!hosts_gpu_pods_.back()) continue;
    const auto whole = static_cast<int32_t>(
        std::count(kind.gpu_milli.begin(), kind.gpu_milli.end(), kMilliGpuPerGpu));
    if (gpu_pool_count_ == 0) {
      min_cpu_milli_ = kind.cpu_milli;
      min_memory_mib_ = kind.memory_mib;
      min_whole_gpus_ = whole;
    }
    ++gpu_pool_count_;
    min_cpu_milli_ = std::min(min_cpu_milli_, kind.cpu_milli);
    min_memory_mib_ = std::min(min_memory_mib_, kind.memory_mib);
    min_whole_gpus_ = std::min(min_whole_gpus_, whole);
  }
}

bool NodePools::HostedByEveryGpuPool(const GpuPodRequest& pod) const {
  if (pod.allowed_gpu_models.empty()) {
    return pod.cpu_milli <= min_cpu_milli_ && pod.memory_mib <= min_memory_mib_ &&
           pod.gpu_count <= min_whole_gpus_;
  }
  for (int pool = 0; pool < pool_count(); ++pool) {
    if (HostsGpuPods(pool) && !Fits(kinds_[pool], pod)) return false;
  }
  return true;
}

std::vector<std::string> NodePools::ModelsWithMemoryAtLeast(int64_t memory_mib) const {
  std::vector<std::string> models;
  for (size_t pool = 0; pool < gpu_memory_mib_.size(); ++pool) {
    if (gpu_memory_mib_[pool] >= memory_mib && !kinds_[pool].gpu_model.empty()) {
      models.push_back(kinds_[pool].gpu_model);
    }
  }
  std::sort(models.begin(), models.end());
  models.erase(std::unique(models.begin(), models.end()), models.end());
  return models;
}

}  // namespace strata::scheduler
