#include "scheduler/capacity_index.h"

#include <algorithm>
#include <map>

#include "common/check.h"
#include "scheduler/mig.h"
#include "scheduler/placement_policy.h"

namespace strata::scheduler {

void NodeSet::Insert(int node, std::vector<int>& positions, int stride, int level) {
  positions[node * stride + level] = static_cast<int>(members_.size());
  members_.push_back(node);
}

void NodeSet::Erase(int node, std::vector<int>& positions, int stride, int level) {
  int position = positions[node * stride + level];
  STRATA_CHECK(position >= 0 && members_[position] == node);
  int last = members_.back();
  members_[position] = last;
  positions[last * stride + level] = position;
  members_.pop_back();
  positions[node * stride + level] = -1;
}

void NodeSet::Sort(std::vector<int>& positions, int stride, int level) {
  std::sort(members_.begin(), members_.end());
  for (size_t i = 0; i < members_.size(); ++i) {
    positions[members_[i] * stride + level] = static_cast<int>(i);
  }
}

CapacityIndex::CapacityIndex(const Cluster& cluster)
    : cluster_(cluster), num_levels_(1 + static_cast<int>(cluster.topology_levels.size())) {
  nodes_.resize(cluster.nodes.size());
  int gpu_count = 0;
  for (size_t n = 0; n < cluster.nodes.size(); ++n) {
    const Node& node = cluster.nodes[n];
    NodeFree& free = nodes_[n];
    free.free_cpu = node.cpu_milli;
    free.free_memory = node.memory_bytes;
    free.first_gpu = gpu_count;
    gpu_count += static_cast<int>(node.gpus.size());
    max_gpus_ = std::max(max_gpus_, static_cast<int>(node.gpus.size()));
    for (const Gpu& gpu : node.gpus) {
      GpuFree g;
      if (gpu.mig_enabled) {
        g.milli = 0;
        g.mig_compute = kMigComputeSlices;
        g.mig_memory = kMigMemorySlices;
      } else {
        g.memory_mib = gpu.memory_mib;
        ++free.free_whole;
      }
      gpus_.push_back(g);
    }
  }
  BuildDomains();
  BuildPools();
}

void CapacityIndex::BuildPools() {
  std::vector<GpuNodeFree> empty(cluster_.nodes.size());
  std::vector<int64_t> gpu_memory_mib(cluster_.nodes.size(), 0);
  for (size_t n = 0; n < cluster_.nodes.size(); ++n) {
    const Node& node = cluster_.nodes[n];
    GpuNodeFree& free = empty[n];
    free.gpu_model = node.gpus.empty() ? "" : node.gpus[0].model;
    if (!node.gpus.empty()) gpu_memory_mib[n] = node.gpus[0].memory_mib;
    free.cpu_milli = node.cpu_milli;
    free.memory_mib = node.memory_bytes >> 20;
    // A MIG-enabled GPU serves MIG instances only: no milli-GPU for the pods a reserve is for.
    for (const Gpu& gpu : node.gpus) free.gpu_milli.push_back(gpu.mig_enabled ? 0 : 1000);
  }
  pools_ = std::make_shared<const NodePools>(empty, gpu_memory_mib);
  pool_free_milli_.assign(pools_->pool_count(), 0);
  for (size_t n = 0; n < empty.size(); ++n) {
    AddFreeMilli(static_cast<int>(n), GpuMilliLeft(empty[n]));
  }
}

void CapacityIndex::AddFreeMilli(int node, int64_t delta) {
  pool_free_milli_[pools_->PoolOf(node)] += delta;
  free_milli_ += delta;
}

void CapacityIndex::BuildDomains() {
  const int stride = num_levels_;
  const int num_nodes = static_cast<int>(nodes_.size());
  node_domains_.assign(static_cast<size_t>(num_nodes) * stride, -1);
  bucket_position_.assign(node_domains_.size(), -1);
  shared_position_.assign(node_domains_.size(), -1);
  domains_.emplace_back();
  // Children of each domain by label value, so a domain's identity is its whole path.
  std::map<std::pair<int, std::string>, int> child_of;
  for (int n = 0; n < num_nodes; ++n) {
    const Node& node = cluster_.nodes[n];
    int current = 0;
    node_domains_[n * stride] = 0;
    for (int level = 1; level < num_levels_; ++level) {
      auto label = node.labels.find(cluster_.topology_levels[level - 1]);
      std::string value = label == node.labels.end() ? "" : label->second;
      auto [it, inserted] = child_of.try_emplace({current, value}, 0);
      if (inserted) {
        it->second = static_cast<int>(domains_.size());
        Domain child;
        child.level = level;
        child.parent = current;
        child.name = value;
        domains_.push_back(std::move(child));
        domains_[current].children.push_back(it->second);
      }
      current = it->second;
      node_domains_[n * stride + level] = current;
    }
  }
  for (Domain& d : domains_) d.by_free_gpus.resize(max_gpus_ + 1);
  for (int n = 0; n < num_nodes; ++n) {
    bool has_mig = false;
    for (const Gpu& gpu : cluster_.nodes[n].gpus) has_mig = has_mig || gpu.mig_enabled;
    for (int level = 0; level < num_levels_; ++level) {
      Domain& d = domains_[node_domains_[n * stride + level]];
      d.nodes.push_back(n);
      d.free_whole_gpus += nodes_[n].free_whole;
      d.by_free_gpus[nodes_[n].free_whole].Insert(n, bucket_position_, stride, level);
      if (has_mig) d.mig_nodes.push_back(n);
    }
  }
}

void CapacityIndex::SortNodeSets() {
  for (Domain& d : domains_) {
    for (NodeSet& bucket : d.by_free_gpus) bucket.Sort(bucket_position_, num_levels_, d.level);
    d.shared.Sort(shared_position_, num_levels_, d.level);
  }
}

int CapacityIndex::LevelOf(std::string_view key) const {
  if (key == kHostLevel) return num_levels_;
  for (size_t i = 0; i < cluster_.topology_levels.size(); ++i) {
    if (cluster_.topology_levels[i] == key) return static_cast<int>(i) + 1;
  }
  return -1;
}

bool CapacityIndex::GpuWhollyFree(int node, int index) const {
  const Gpu& spec = cluster_.nodes[node].gpus[index];
  const GpuFree& g = gpu(node, index);
  return !spec.mig_enabled && g.milli == 1000 && g.memory_mib == spec.memory_mib;
}

bool CapacityIndex::PartlyUsed(int node, int index) const {
  const GpuFree& g = gpu(node, index);
  return !cluster_.nodes[node].gpus[index].mig_enabled && !GpuWhollyFree(node, index) &&
         g.milli > 0 && g.memory_mib > 0;
}

void CapacityIndex::UpdateNode(int node, int old_free_whole, int old_partly_used) {
  NodeFree& free = nodes_[node];
  const int stride = num_levels_;
  const bool was_shared = old_partly_used > 0;
  const bool is_shared = free.partly_used > 0;
  for (int level = 0; level < num_levels_; ++level) {
    Domain& d = domains_[node_domains_[node * stride + level]];
    if (old_free_whole != free.free_whole) {
      d.free_whole_gpus += free.free_whole - old_free_whole;
      d.by_free_gpus[old_free_whole].Erase(node, bucket_position_, stride, level);
      d.by_free_gpus[free.free_whole].Insert(node, bucket_position_, stride, level);
    }
    if (was_shared && !is_shared) d.shared.Erase(node, shared_position_, stride, level);
    if (!was_shared && is_shared) d.shared.Insert(node, shared_position_, stride, level);
  }
}

bool CapacityIndex::CanAllocate(const PodSet& pod_set, const PodPlacement& placement) const {
  const int n = placement.node;
  if (n < 0 || n >= num_nodes()) return false;
  const NodeFree& free = nodes_[n];
  const Node& node = cluster_.nodes[n];
  if (free.free_cpu < pod_set.cpu_milli || free.free_memory < pod_set.memory_bytes) return false;
  const GpuRequest& request = pod_set.gpu;
  for (size_t i = 0; i < placement.gpus.size(); ++i) {
    const int index = placement.gpus[i];
    if (index < 0 || index >= static_cast<int>(node.gpus.size())) return false;
    for (size_t j = 0; j < i; ++j) {
      if (placement.gpus[j] == index) return false;
    }
    const Gpu& spec = node.gpus[index];
    const GpuFree& g = gpus_[free.first_gpu + index];
    if (request.IsWhole()) {
      if (!GpuWhollyFree(n, index)) return false;
    } else if (request.IsMig()) {
      auto profile = FindMigProfile(spec.memory_mib, request.mig_profile);
      if (!spec.mig_enabled || !profile || g.mig_compute < profile->compute_slices ||
          g.mig_memory < profile->memory_slices) {
        return false;
      }
    } else if (spec.mig_enabled || g.milli < request.milli || g.memory_mib < request.memory_mib) {
      return false;
    }
  }
  return true;
}

void CapacityIndex::Allocate(const PodSet& pod_set, const PodPlacement& placement) {
  const int n = placement.node;
  NodeFree& free = nodes_[n];
  const Node& node = cluster_.nodes[n];
  STRATA_CHECK(free.free_cpu >= pod_set.cpu_milli && free.free_memory >= pod_set.memory_bytes);
  const int old_free_whole = free.free_whole;
  const int old_partly_used = free.partly_used;
  free.free_cpu -= pod_set.cpu_milli;
  free.free_memory -= pod_set.memory_bytes;
  const GpuRequest& request = pod_set.gpu;
  for (int index : placement.gpus) {
    const Gpu& spec = node.gpus[index];
    GpuFree& g = gpus_[free.first_gpu + index];
    if (request.IsWhole()) {
      STRATA_CHECK(GpuWhollyFree(n, index));
      AddFreeMilli(n, -g.milli);
      g.milli = 0;
      g.memory_mib = 0;
      --free.free_whole;
    } else if (request.IsMig()) {
      auto profile = FindMigProfile(spec.memory_mib, request.mig_profile);
      STRATA_CHECK(spec.mig_enabled && profile && g.mig_compute >= profile->compute_slices &&
                   g.mig_memory >= profile->memory_slices);
      g.mig_compute -= profile->compute_slices;
      g.mig_memory -= profile->memory_slices;
    } else {
      const bool was_free = GpuWhollyFree(n, index);
      const bool was_partly = PartlyUsed(n, index);
      STRATA_CHECK(!spec.mig_enabled && g.milli >= request.milli &&
                   g.memory_mib >= request.memory_mib);
      g.milli -= static_cast<int32_t>(request.milli);
      g.memory_mib -= request.memory_mib;
      AddFreeMilli(n, -request.milli);
      if (was_free) --free.free_whole;
      free.partly_used += PartlyUsed(n, index) - was_partly;
    }
  }
  UpdateNode(n, old_free_whole, old_partly_used);
}

void CapacityIndex::Release(const PodSet& pod_set, const PodPlacement& placement) {
  const int n = placement.node;
  NodeFree& free = nodes_[n];
  const Node& node = cluster_.nodes[n];
  const int old_free_whole = free.free_whole;
  const int old_partly_used = free.partly_used;
  free.free_cpu += pod_set.cpu_milli;
  free.free_memory += pod_set.memory_bytes;
  const GpuRequest& request = pod_set.gpu;
  for (int index : placement.gpus) {
    const Gpu& spec = node.gpus[index];
    GpuFree& g = gpus_[free.first_gpu + index];
    if (request.IsWhole()) {
      AddFreeMilli(n, 1000 - g.milli);
      g.milli = 1000;
      g.memory_mib = spec.memory_mib;
      ++free.free_whole;
    } else if (request.IsMig()) {
      auto profile = FindMigProfile(spec.memory_mib, request.mig_profile);
      STRATA_CHECK(profile.has_value());
      g.mig_compute += profile->compute_slices;
      g.mig_memory += profile->memory_slices;
    } else {
      const bool was_partly = PartlyUsed(n, index);
      g.milli += static_cast<int32_t>(request.milli);
      g.memory_mib += request.memory_mib;
      AddFreeMilli(n, request.milli);
      STRATA_CHECK(g.milli <= 1000 && g.memory_mib <= spec.memory_mib);
      if (GpuWhollyFree(n, index)) ++free.free_whole;
      free.partly_used += PartlyUsed(n, index) - was_partly;
    }
  }
  UpdateNode(n, old_free_whole, old_partly_used);
}

void CapacityIndex::SetReserved(const std::vector<int>& nodes, bool reserved) {
  for (int n : nodes) nodes_[n].reserved = reserved;
}

}  // namespace strata::scheduler
