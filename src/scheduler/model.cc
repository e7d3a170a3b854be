#include "scheduler/model.h"

#include <charconv>

namespace strata::scheduler {

std::string_view ResourceName(Resource resource) {
  switch (resource) {
    case Resource::kGpu:
      return "nvidia.com/gpu";
    case Resource::kGpuMemory:
      return "strata.dev/gpu-memory";
    case Resource::kCpu:
      return "cpu";
    case Resource::kMemory:
      return "memory";
  }
  return "unknown";
}

ResourceVector& ResourceVector::operator+=(const ResourceVector& other) {
  for (int i = 0; i < kNumResources; ++i) amount[i] += other.amount[i];
  return *this;
}

ResourceVector& ResourceVector::operator-=(const ResourceVector& other) {
  for (int i = 0; i < kNumResources; ++i) amount[i] -= other.amount[i];
  return *this;
}

bool Tolerates(const std::vector<Toleration>& tolerations, const Taint& taint) {
  for (const Toleration& t : tolerations) {
    if (t.effect && *t.effect != taint.effect) continue;
    if (t.key.empty() && t.exists) return true;
    if (t.key != taint.key) continue;
    if (t.exists || t.value == taint.value) return true;
  }
  return false;
}

namespace {

std::optional<int64_t> ParseInteger(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

bool Matches(const Labels& labels, const LabelRequirement& requirement) {
  auto it = labels.find(requirement.key);
  const bool present = it != labels.end();
  switch (requirement.op) {
    case SelectorOperator::kExists:
      return present;
    case SelectorOperator::kDoesNotExist:
      return !present;
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn: {
      bool in = false;
      if (present) {
        for (const std::string& v : requirement.values) in = in || v == it->second;
      }
      return requirement.op == SelectorOperator::kIn ? in : !in;
    }
    case SelectorOperator::kGt:
    case SelectorOperator::kLt: {
      if (!present || requirement.values.size() != 1) return false;
      auto have = ParseInteger(it->second);
      auto want = ParseInteger(requirement.values[0]);
      if (!have || !want) return false;
      return requirement.op == SelectorOperator::kGt ? *have > *want : *have < *want;
    }
  }
  return false;
}

std::string_view PendingTierName(PendingTier tier) {
  switch (tier) {
    case PendingTier::kWaitingForQuota:
      return "WaitingForQuota";
    case PendingTier::kTopologyPlacementFailed:
      return "TopologyPlacementFailed";
    case PendingTier::kGangIncomplete:
      return "GangIncomplete";
    case PendingTier::kPreemptionPending:
      return "PreemptionPending";
    case PendingTier::kReserved:
      return "Reserved";
    case PendingTier::kUnschedulable:
      return "Unschedulable";
    case PendingTier::kBlockedByStrictFifo:
      return "BlockedByStrictFIFO";
    case PendingTier::kInvalid:
      return "Invalid";
    case PendingTier::kExceedsClusterCapacity:
      return "ExceedsClusterCapacity";
  }
  return "Unknown";
}

}  // namespace strata::scheduler
