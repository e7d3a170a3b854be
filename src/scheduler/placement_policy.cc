#include "scheduler/placement_policy.h"

#include <fmt/format.h>

#include <numeric>
#include <string>

#include "common/check.h"
#include "scheduler/best_fit_placement.h"
#include "scheduler/dot_product_placement.h"
#include "scheduler/fgd_placement.h"
#include "scheduler/fragmentation_placement.h"
#include "scheduler/gpu_clustering_placement.h"
#include "scheduler/gpu_packing_placement.h"
#include "scheduler/random_placement.h"

namespace strata::scheduler {

uint64_t DrawBelow(PlacementRng& rng, uint64_t n) {
  STRATA_CHECK(n > 0);
  // Rejection keeps the draw exactly uniform; at most one retry in expectation.
  const uint64_t limit = PlacementRng::max() - (PlacementRng::max() % n + 1) % n;
  uint64_t draw = rng();
  while (draw > limit) draw = rng();
  return draw % n;
}

int32_t GpuPodTag(const GpuPodRequest& pod) {
  return pod.IsFractional() ? kShareTag : pod.gpu_count;
}

std::vector<std::string_view> PlacementPolicyNames() {
  return {"random", "dotprod", "clustering", "packing", "bestfit", "fgd", "strata"};
}

Result<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(std::string_view name,
                                                             const WorkloadMix* mix,
                                                             PlacementRng* rng) {
  if (name == "random") {
    STRATA_CHECK(rng != nullptr);
    return std::unique_ptr<PlacementPolicy>(std::make_unique<RandomPlacement>(rng));
  }
  if (name == "dotprod")
    return std::unique_ptr<PlacementPolicy>(std::make_unique<DotProductPlacement>());
  if (name == "clustering") {
    return std::unique_ptr<PlacementPolicy>(std::make_unique<GpuClusteringPlacement>());
  }
  if (name == "packing")
    return std::unique_ptr<PlacementPolicy>(std::make_unique<GpuPackingPlacement>());
  if (name == "bestfit")
    return std::unique_ptr<PlacementPolicy>(std::make_unique<BestFitPlacement>());
  if (name == "fgd") {
    STRATA_CHECK(mix != nullptr);
    return std::unique_ptr<PlacementPolicy>(std::make_unique<FgdPlacement>(*mix));
  }
  if (name == "strata") {
    STRATA_CHECK(mix != nullptr);
    return std::unique_ptr<PlacementPolicy>(std::make_unique<FragmentationPlacement>(*mix));
  }
  std::string valid;
  for (std::string_view candidate : PlacementPolicyNames()) {
    valid += valid.empty() ? "" : ", ";
    valid += candidate;
  }
  return Err(
      InvalidArgumentError(fmt::format("unknown policy '{}': expected one of {}", name, valid)));
}

int64_t GpuMilliLeft(const GpuNodeFree& node) {
  return std::accumulate(node.gpu_milli.begin(), node.gpu_milli.end(), int64_t{0});
}

std::vector<int> LowestIndexedFitting(const GpuNodeFree& node, int32_t count, int32_t milli) {
  std::vector<int> taken;
  for (int i = 0; i < static_cast<int>(node.gpu_milli.size()) && count > 0; ++i) {
    if (node.gpu_milli[i] >= milli) {
      taken.push_back(i);
      --count;
    }
  }
  STRATA_CHECK(count == 0);
  return taken;
}

std::vector<int> TightestFitGpus(const GpuNodeFree& node, const GpuPodRequest& pod) {
  if (pod.gpu_count == 0) return {};
  if (!pod.IsFractional()) return LowestIndexedFitting(node, pod.gpu_count, pod.gpu_milli_each);
  int best = -1;
  for (int i = 0; i < static_cast<int>(node.gpu_milli.size()); ++i) {
    if (node.gpu_milli[i] >= pod.gpu_milli_each &&
        (best < 0 || node.gpu_milli[i] < node.gpu_milli[best])) {
      best = i;
    }
  }
  STRATA_CHECK(best >= 0);
  return {best};
}

}  // namespace strata::scheduler
