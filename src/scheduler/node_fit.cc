#include "scheduler/node_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "scheduler/mig.h"

namespace strata::scheduler {
namespace {

constexpr int kMaxIslands = 16;

bool HasGpuSelector(const GpuRequest& request) {
  return !request.models.empty() || request.min_memory_mib > 0;
}

bool GpuMatchesSelector(const Gpu& gpu, const GpuRequest& request) {
  if (gpu.memory_mib < request.min_memory_mib) return false;
  if (request.models.empty()) return true;
  return std::find(request.models.begin(), request.models.end(), gpu.model) != request.models.end();
}

const Taint* FirstUntoleratedTaint(const Node& node, const PodSet& pod_set) {
  for (const Taint& taint : node.taints) {
    if (taint.effect == TaintEffect::kPreferNoSchedule) continue;
    if (!Tolerates(pod_set.tolerations, taint)) return &taint;
  }
  return nullptr;
}

bool MatchesSelectorAndAffinity(const Node& node, const PodSet& pod_set,
                                const FitContext& context) {
  for (const auto& [key, value] : pod_set.node_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) return false;
  }
  if (context.flavor != nullptr) {
    for (const auto& [key, value] : context.flavor->node_labels) {
      auto it = node.labels.find(key);
      if (it == node.labels.end() || it->second != value) return false;
    }
  }
  if (pod_set.affinity.empty()) return true;
  for (const NodeAffinityTerm& term : pod_set.affinity) {
    bool all = true;
    for (const LabelRequirement& r : term.requirements) all = all && Matches(node.labels, r);
    if (all) return true;
  }
  return false;
}

bool MatchesGpuSelector(const Node& node, const GpuRequest& request) {
  if (!HasGpuSelector(request) || node.gpus.empty()) return true;
  for (const Gpu& gpu : node.gpus) {
    if (GpuMatchesSelector(gpu, request)) return true;
  }
  return false;
}

// Whole GPUs from one island: the island with the fewest free GPUs that still fits; a request
// larger than every island takes the freest islands first.
bool ChooseWholeGpus(const CapacityIndex& index, int n, const GpuRequest& request,
                     std::vector<int>* gpus, bool* island_blocked) {
  const Node& node = index.cluster().nodes[n];
  std::array<int, kMaxIslands> free{};
  std::array<int, kMaxIslands> size{};
  int total_free = 0;
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    const Gpu& spec = node.gpus[i];
    const int island = std::clamp(spec.island, 0, kMaxIslands - 1);
    ++size[island];
    const GpuFree& g = index.gpu(n, static_cast<int>(i));
    if (!spec.mig_enabled && g.milli == 1000 && g.memory_mib == spec.memory_mib &&
        GpuMatchesSelector(spec, request)) {
      ++free[island];
      ++total_free;
    }
  }
  if (total_free < request.count) return false;
  int best = -1;
  int largest_island = 0;
  for (int i = 0; i < kMaxIslands; ++i) {
    largest_island = std::max(largest_island, size[i]);
    if (free[i] >= request.count && (best < 0 || free[i] < free[best])) best = i;
  }
  std::array<bool, kMaxIslands> take{};
  if (best >= 0) {
    take[best] = true;
  } else if (request.count > largest_island) {
    take.fill(true);
  } else {
    if (island_blocked != nullptr) *island_blocked = true;
    return false;
  }
  if (gpus == nullptr) return true;
  gpus->clear();
  for (size_t i = 0; i < node.gpus.size() && static_cast<int>(gpus->size()) < request.count; ++i) {
    const Gpu& spec = node.gpus[i];
    const GpuFree& g = index.gpu(n, static_cast<int>(i));
    if (take[std::clamp(spec.island, 0, kMaxIslands - 1)] && !spec.mig_enabled && g.milli == 1000 &&
        g.memory_mib == spec.memory_mib && GpuMatchesSelector(spec, request)) {
      gpus->push_back(static_cast<int>(i));
    }
  }
  return true;
}

// The GPU left with the least free capacity after taking a share or a MIG instance, or -1.
int ChooseSharedGpu(const CapacityIndex& index, int n, const GpuRequest& request) {
  const Node& node = index.cluster().nodes[n];
  int best = -1;
  int64_t best_left = 0;
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    const Gpu& spec = node.gpus[i];
    if (!GpuMatchesSelector(spec, request) || spec.mig_enabled != request.IsMig()) continue;
    const GpuFree& g = index.gpu(n, static_cast<int>(i));
    int64_t left = 0;
    if (request.IsMig()) {
      auto profile = FindMigProfile(spec.memory_mib, request.mig_profile);
      if (!profile || g.mig_compute < profile->compute_slices ||
          g.mig_memory < profile->memory_slices) {
        continue;
      }
      left = (g.mig_compute - profile->compute_slices) * 16 + g.mig_memory;
    } else {
      if (g.milli < request.milli || g.memory_mib < request.memory_mib) continue;
      left = (g.milli - request.milli) * (int64_t{1} << 24) + (g.memory_mib - request.memory_mib);
    }
    if (best < 0 || left < best_left) {
      best = static_cast<int>(i);
      best_left = left;
    }
  }
  return best;
}

}  // namespace

bool StaticFit(const Node& node, const PodSet& pod_set, const FitContext& context) {
  if (node.unschedulable) return false;
  if (FirstUntoleratedTaint(node, pod_set) != nullptr) return false;
  if (!MatchesSelectorAndAffinity(node, pod_set, context)) return false;
  return MatchesGpuSelector(node, pod_set.gpu);
}

bool ChooseGpus(const CapacityIndex& index, int node, const PodSet& pod_set,
                std::vector<int>* gpus) {
  if (index.free_cpu(node) < pod_set.cpu_milli || index.free_memory(node) < pod_set.memory_bytes) {
    return false;
  }
  const GpuRequest& request = pod_set.gpu;
  if (request.IsWhole()) {
    if (index.free_whole_gpus(node) < request.count) return false;
    return ChooseWholeGpus(index, node, request, gpus, nullptr);
  }
  if (!request.Any()) {
    if (gpus != nullptr) gpus->clear();
    return true;
  }
  int chosen = ChooseSharedGpu(index, node, request);
  if (chosen < 0) return false;
  if (gpus != nullptr) gpus->assign(1, chosen);
  return true;
}

std::vector<std::string> UnfitReasons(const CapacityIndex& index, int n, const PodSet& pod_set,
                                      const FitContext& context) {
  const Node& node = index.cluster().nodes[n];
  if (node.unschedulable) return {"node(s) were unschedulable"};
  if (const Taint* taint = FirstUntoleratedTaint(node, pod_set)) {
    return {fmt::format("node(s) had untolerated taint {{{}: {}}}", taint->key, taint->value)};
  }
  if (!MatchesSelectorAndAffinity(node, pod_set, context)) {
    return {"node(s) didn't match Pod's node affinity/selector"};
  }
  if (!MatchesGpuSelector(node, pod_set.gpu)) return {"node(s) didn't match Pod's GPU selector"};
  std::vector<std::string> reasons;
  if (index.free_cpu(n) < pod_set.cpu_milli) reasons.push_back("Insufficient cpu");
  if (index.free_memory(n) < pod_set.memory_bytes) reasons.push_back("Insufficient memory");
  const GpuRequest& request = pod_set.gpu;
  bool island_blocked = false;
  if (request.IsWhole()) {
    if (!ChooseWholeGpus(index, n, request, nullptr, &island_blocked) && !island_blocked) {
      reasons.push_back("Insufficient nvidia.com/gpu");
    }
  } else if (request.IsMig()) {
    if (ChooseSharedGpu(index, n, request) < 0) {
      reasons.push_back(fmt::format("Insufficient nvidia.com/mig-{}", request.mig_profile));
    }
  } else if (request.IsShare() && ChooseSharedGpu(index, n, request) < 0) {
    GpuRequest compute_only = request;
    compute_only.memory_mib = 0;
    reasons.push_back(ChooseSharedGpu(index, n, compute_only) < 0
                          ? "Insufficient nvidia.com/gpu"
                          : "Insufficient strata.dev/gpu-memory");
  }
  if (!reasons.empty()) return reasons;
  if (island_blocked) {
    return {fmt::format("node(s) had no NVLink island with {} free GPUs", request.count)};
  }
  if (index.reserved(n) && !context.may_use_reserved) {
    return {"node(s) were reserved for the head-of-line gang"};
  }
  return {};
}

void FitErrorBuilder::AddNode(const std::vector<std::string>& reasons) {
  ++nodes_;
  for (const std::string& reason : reasons) ++counts_[reason];
}

std::string FitErrorBuilder::Message(std::string_view for_whom) const {
  std::vector<std::string> entries;
  entries.reserve(counts_.size());
  for (const auto& [reason, count] : counts_)
    entries.push_back(fmt::format("{} {}", count, reason));
  std::sort(entries.begin(), entries.end());
  std::string message = fmt::format("0/{} nodes are available{}", nodes_, for_whom);
  if (entries.empty()) return message + ".";
  message += ": ";
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) message += ", ";
    message += entries[i];
  }
  return message + ".";
}

}  // namespace strata::scheduler
