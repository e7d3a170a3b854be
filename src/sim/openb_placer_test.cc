#include "sim/openb_placer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata::sim {
namespace {

using scheduler::GpuNodeFree;
using scheduler::GpuPodRequest;

GpuPodRequest WholeGpu(std::vector<std::string> models = {}) {
  GpuPodRequest pod;
  pod.cpu_milli = 4000;
  pod.memory_mib = 1024;
  pod.gpu_count = 1;
  pod.gpu_milli_each = 1000;
  pod.allowed_gpu_models = std::move(models);
  return pod;
}

OpenbSimNode OneGpuNode(std::string model) {
  OpenbSimNode node;
  node.node.free = GpuNodeFree{
      .gpu_model = std::move(model), .cpu_milli = 32000, .memory_mib = 65536, .gpu_milli = {1000}};
  return node;
}

// Places `arrivals` one after another with `policy` and returns how many found a node.
int PlaceAll(std::string_view policy, std::vector<OpenbSimNode> nodes,
             const std::vector<OpenbSimPod>& arrivals, const std::vector<GpuPodRequest>& observed,
             int shape_count) {
  const scheduler::WorkloadMix mix = scheduler::EstimateWorkloadMix(observed);
  std::vector<GpuNodeFree> empty;
  for (const OpenbSimNode& node : nodes) empty.push_back(node.node.free);
  // The T4 node ranks first, so that a tie of scores would send a pod there.
  std::vector<uint32_t> rank = {1, 2, 0};
  Result<std::unique_ptr<scheduler::PlacementPolicy>> made =
      scheduler::MakePlacementPolicy(policy, &mix, nullptr);
  EXPECT_TRUE(made.has_value());
  OpenbPlacer placer(std::move(*made), rank, shape_count, scheduler::PoolReserve(observed, empty));
  int placed = 0;
  for (const OpenbSimPod& pod : arrivals) {
    const std::optional<OpenbChoice> choice = placer.Choose(nodes, pod);
    if (!choice) continue;
    OpenbSimNode& node = nodes[choice->node];
    node.node.free.cpu_milli -= pod.request.cpu_milli;
    for (int gpu : choice->gpu_indices) node.node.free.gpu_milli[gpu] -= pod.request.gpu_milli_each;
    ++node.version;
    ++placed;
  }
  return placed;
}

TEST(OpenbPlacerTest, PodThatMayRunAnywhereLeavesTheScarceModelToThePodsThatNeedIt) {
  // Two V100 GPUs and one T4 GPU; the pods: one that may run anywhere, then one that needs V100
  // and one that needs T4. FGD counts the T4 GPU as a fragment to the V100 pods (most of the
  // mix), so taking it lowers its measure most: the first pod takes the T4 and the T4 pod fails.
  // strata leaves out shapes a node could never hold (a tie, which the node order would give to
  // the T4) and keeps the T4 pool's reserve: the first pod takes a V100 and all three land.
  const std::vector<OpenbSimNode> nodes = {OneGpuNode("V100M32"), OneGpuNode("V100M32"),
                                           OneGpuNode("T4")};
  const std::vector<OpenbSimPod> arrivals = {
      {WholeGpu(), 0}, {WholeGpu({"V100M32"}), 1}, {WholeGpu({"T4"}), 2}};
  const std::vector<GpuPodRequest> observed = {WholeGpu(),
                                               WholeGpu({"V100M32"}),
                                               WholeGpu({"V100M32"}),
                                               WholeGpu({"V100M32"}),
                                               WholeGpu({"V100M32"}),
                                               WholeGpu({"T4"})};
  EXPECT_EQ(PlaceAll("fgd", nodes, arrivals, observed, 3), 2);
  EXPECT_EQ(PlaceAll("strata", nodes, arrivals, observed, 3), 3);
}

}  // namespace
}  // namespace strata::sim
