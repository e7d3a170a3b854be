#include "scheduler/quota_ledger.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "common/check.h"
#include "scheduler/mig.h"

namespace strata::scheduler {
namespace {

// "32", "0.5", "24Gi": a resource amount in the units users write.
std::string FormatAmount(Resource r, int64_t amount) {
  switch (r) {
    case Resource::kGpu:
    case Resource::kCpu:
      if (amount % 1000 == 0) return fmt::format("{}", amount / 1000);
      return fmt::format("{}m", amount);
    case Resource::kGpuMemory:
      return fmt::format("{}Mi", amount);
    case Resource::kMemory:
      if (amount % (int64_t{1} << 30) == 0) return fmt::format("{}Gi", amount >> 30);
      return fmt::format("{}", amount);
  }
  return fmt::format("{}", amount);
}

// MIG profile names carry their size: "3g.40gb" is 3 of 7 compute slices and 40 GiB.
void ChargeMig(std::string_view profile, ResourceVector* charge) {
  int compute = 0;
  int64_t gb = 0;
  if (std::sscanf(std::string(profile).c_str(), "%dg.%ldgb", &compute, &gb) != 2) return;
  (*charge)[Resource::kGpu] += (compute * 1000 + kMigComputeSlices - 1) / kMigComputeSlices;
  (*charge)[Resource::kGpuMemory] += gb * 1024;
}

}  // namespace

QuotaLedger::QuotaLedger(const Cluster& cluster)
    : cluster_(cluster), num_flavors_(static_cast<int>(cluster.flavors.size())) {
  std::unordered_map<std::string, int> cohort_index;
  queues_.resize(cluster.queues.size());
  for (size_t q = 0; q < cluster.queues.size(); ++q) {
    const Queue& queue = cluster.queues[q];
    queue_index_.emplace(queue.name, static_cast<int>(q));
    QueueState& state = queues_[q];
    state.quota.assign(num_flavors_, nullptr);
    state.usage.assign(num_flavors_, ResourceVector{});
    for (const FlavorQuota& fq : queue.flavors) {
      STRATA_CHECK(fq.flavor >= 0 && fq.flavor < num_flavors_);
      state.quota[fq.flavor] = &fq;
    }
    if (!queue.cohort.empty()) {
      auto [it, inserted] = cohort_index.try_emplace(queue.cohort, cohort_index.size());
      state.cohort = it->second;
    }
  }
  pools_.resize(cohort_index.size() * num_flavors_);
  cohort_nominal_.resize(cohort_index.size());
  for (const QueueState& state : queues_) {
    if (state.cohort < 0) continue;
    for (int f = 0; f < num_flavors_; ++f) {
      if (state.quota[f] == nullptr) continue;
      for (int r = 0; r < kNumResources; ++r) {
        const auto& quota = state.quota[f]->resources[r];
        if (!quota) continue;
        PoolOf(state.cohort, f).capacity.amount[r] += quota->nominal - Guaranteed(*quota);
        cohort_nominal_[state.cohort].amount[r] += quota->nominal;
      }
    }
  }
}

int QuotaLedger::QueueIndex(std::string_view name) const {
  auto it = queue_index_.find(std::string(name));
  return it == queue_index_.end() ? -1 : it->second;
}

ResourceVector QuotaLedger::ChargeFor(const Workload& workload, const Flavor* flavor) {
  ResourceVector total;
  for (const PodSet& ps : workload.pod_sets) {
    ResourceVector pod;
    pod[Resource::kCpu] = ps.cpu_milli;
    pod[Resource::kMemory] = ps.memory_bytes;
    const GpuRequest& gpu = ps.gpu;
    if (gpu.IsWhole()) {
      pod[Resource::kGpu] = int64_t{gpu.count} * 1000;
      if (flavor != nullptr && flavor->gpu_memory_mib) {
        pod[Resource::kGpuMemory] = gpu.count * *flavor->gpu_memory_mib;
      }
    } else if (gpu.IsMig()) {
      ChargeMig(gpu.mig_profile, &pod);
    } else {
      pod[Resource::kGpu] = gpu.milli;
      pod[Resource::kGpuMemory] = gpu.memory_mib;
    }
    for (int r = 0; r < kNumResources; ++r) total.amount[r] += pod.amount[r] * ps.count;
  }
  return total;
}

int64_t QuotaLedger::Guaranteed(const ResourceQuota& quota) {
  if (!quota.lending_limit) return 0;
  return std::max<int64_t>(0, quota.nominal - *quota.lending_limit);
}

std::optional<int64_t> QuotaLedger::Ceiling(int queue, int flavor, Resource r) const {
  const QueueState& state = queues_[queue];
  const auto& quota = state.quota[flavor]->resources[static_cast<int>(r)];
  if (!quota) return std::nullopt;
  if (state.cohort < 0) return quota->nominal;
  const int64_t used = state.usage[flavor][r];
  const int64_t guaranteed = Guaranteed(*quota);
  const Pool& pool = PoolOf(state.cohort, flavor);
  const int64_t others_in_pool = pool.used[r] - std::max<int64_t>(0, used - guaranteed);
  int64_t ceiling = guaranteed + pool.capacity[r] - others_in_pool;
  if (quota->borrowing_limit) ceiling = std::min(ceiling, quota->nominal + *quota->borrowing_limit);
  return ceiling;
}

bool QuotaLedger::Fits(int queue, int flavor, const ResourceVector& request) const {
  const QueueState& state = queues_[queue];
  if (state.quota[flavor] == nullptr) return false;
  for (int r = 0; r < kNumResources; ++r) {
    if (request.amount[r] == 0 || !state.quota[flavor]->resources[r]) continue;
    const int64_t wanted = state.usage[flavor].amount[r] + request.amount[r];
    if (wanted > *Ceiling(queue, flavor, static_cast<Resource>(r))) return false;
  }
  return true;
}

bool QuotaLedger::WithinNominal(int queue, int flavor, const ResourceVector& request) const {
  const QueueState& state = queues_[queue];
  if (state.quota[flavor] == nullptr) return false;
  for (int r = 0; r < kNumResources; ++r) {
    const auto& quota = state.quota[flavor]->resources[r];
    if (request.amount[r] == 0 || !quota) continue;
    if (state.usage[flavor].amount[r] + request.amount[r] > quota->nominal) return false;
  }
  return true;
}

std::string QuotaLedger::Explain(int queue, int flavor, const ResourceVector& request) const {
  const QueueState& state = queues_[queue];
  const std::string& name = cluster_.queues[queue].name;
  if (state.quota[flavor] == nullptr) {
    return fmt::format("queue {}: no quota in flavor {}", name, cluster_.flavors[flavor].name);
  }
  for (int r = 0; r < kNumResources; ++r) {
    const auto& quota = state.quota[flavor]->resources[r];
    if (request.amount[r] == 0 || !quota) continue;
    const Resource resource = static_cast<Resource>(r);
    const int64_t used = state.usage[flavor].amount[r];
    const int64_t ceiling = *Ceiling(queue, flavor, resource);
    if (used + request.amount[r] <= ceiling) continue;
    const std::string in_use =
        fmt::format("queue {}: {}/{} {} in use", name, FormatAmount(resource, used),
                    FormatAmount(resource, quota->nominal), ResourceName(resource));
    if (state.cohort < 0) return in_use + ", no cohort to borrow from";
    const int64_t lend = std::max<int64_t>(0, ceiling - std::max(used, quota->nominal));
    return fmt::format("{}, cohort can lend {}", in_use, FormatAmount(resource, lend));
  }
  return fmt::format("queue {}: quota exhausted", name);
}

void QuotaLedger::Apply(int queue, int flavor, const ResourceVector& amount, int sign) {
  QueueState& state = queues_[queue];
  if (flavor < 0 || state.quota[flavor] == nullptr) return;
  for (int r = 0; r < kNumResources; ++r) {
    const auto& quota = state.quota[flavor]->resources[r];
    int64_t& used = state.usage[flavor].amount[r];
    if (quota && state.cohort >= 0) {
      const int64_t guaranteed = Guaranteed(*quota);
      Pool& pool = PoolOf(state.cohort, flavor);
      pool.used.amount[r] -= std::max<int64_t>(0, used - guaranteed);
      used += sign * amount.amount[r];
      pool.used.amount[r] += std::max<int64_t>(0, used - guaranteed);
    } else {
      used += sign * amount.amount[r];
    }
  }
}

void QuotaLedger::Add(int queue, int flavor, const ResourceVector& amount) {
  Apply(queue, flavor, amount, +1);
}

void QuotaLedger::Subtract(int queue, int flavor, const ResourceVector& amount) {
  Apply(queue, flavor, amount, -1);
}

bool QuotaLedger::IsBorrowing(int queue, int flavor) const {
  const QueueState& state = queues_[queue];
  if (flavor < 0 || state.quota[flavor] == nullptr) return false;
  for (int r = 0; r < kNumResources; ++r) {
    const auto& quota = state.quota[flavor]->resources[r];
    if (quota && state.usage[flavor].amount[r] > quota->nominal) return true;
  }
  return false;
}

double QuotaLedger::DominantShare(int queue) const {
  const QueueState& state = queues_[queue];
  ResourceVector nominal;
  ResourceVector usage;
  for (int f = 0; f < num_flavors_; ++f) {
    if (state.quota[f] == nullptr) continue;
    usage += state.usage[f];
    for (int r = 0; r < kNumResources; ++r) {
      const auto& quota = state.quota[f]->resources[r];
      if (quota) nominal.amount[r] += quota->nominal;
    }
  }
  if (state.cohort >= 0) nominal = cohort_nominal_[state.cohort];
  double share = 0;
  for (int r = 0; r < kNumResources; ++r) {
    if (nominal.amount[r] > 0) {
      share = std::max(share, static_cast<double>(usage.amount[r]) / nominal.amount[r]);
    }
  }
  const double weight = cluster_.queues[queue].weight;
  return weight > 0 ? share / weight : share;
}

}  // namespace strata::scheduler
