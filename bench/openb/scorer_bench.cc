// Cost of scheduler::PlanPlacement, the fragmentation scorer the scheduler calls per candidate
// node, on openb-like shapes: a mix of 35 pod shapes (the size FGD's 95 % coverage keeps on the
// default trace) and 8-GPU nodes in various states.
#include <benchmark/benchmark.h>

#include <vector>

#include "scheduler/fragmentation.h"

namespace strata::scheduler {
namespace {

WorkloadMix OpenbLikeMix() {
  std::vector<GpuPodRequest> observed;
  const int32_t fractions[] = {810, 470, 320, 650, 230, 460, 590, 160, 550, 220, 370, 110};
  for (int i = 0; i < 35; ++i) {
    GpuPodRequest pod;
    pod.cpu_milli = 2000 + 1000 * (i % 12);
    pod.gpu_count = i % 7 == 6 ? 0 : (i % 11 == 10 ? 8 : 1);
    pod.gpu_milli_each = pod.gpu_count == 0 ? 0 : (i % 3 == 0 ? 1000 : fractions[i % 12]);
    if (pod.gpu_count == 8) pod.gpu_milli_each = 1000;
    for (int copies = 0; copies < 40 - i; ++copies) observed.push_back(pod);
  }
  return EstimateWorkloadMix(observed, {.coverage = 1.0});
}

GpuNodeFree PartlyUsedNode() {
  return GpuNodeFree{.gpu_model = "G2",
                     .cpu_milli = 60000,
                     .memory_mib = 400000,
                     .gpu_milli = {1000, 1000, 530, 190, 1000, 0, 540, 1000}};
}

GpuPodRequest Pod(int32_t count, int32_t milli) {
  GpuPodRequest pod;
  pod.cpu_milli = 6000;
  pod.memory_mib = 12288;
  pod.gpu_count = count;
  pod.gpu_milli_each = milli;
  return pod;
}

void BM_PlanPlacementFraction(benchmark::State& state) {
  const WorkloadMix mix = OpenbLikeMix();
  const GpuNodeFree node = PartlyUsedNode();
  const GpuPodRequest pod = Pod(1, 460);
  for (auto _ : state) benchmark::DoNotOptimize(PlanPlacement(node, pod, mix));
}
BENCHMARK(BM_PlanPlacementFraction);

void BM_PlanPlacementWholeGpus(benchmark::State& state) {
  const WorkloadMix mix = OpenbLikeMix();
  const GpuNodeFree node = PartlyUsedNode();
  const GpuPodRequest pod = Pod(2, 1000);
  for (auto _ : state) benchmark::DoNotOptimize(PlanPlacement(node, pod, mix));
}
BENCHMARK(BM_PlanPlacementWholeGpus);

// One scheduling decision on an openb-sized cluster: score a fractional pod on 1,213 nodes,
// uncached, and keep the best.
void BM_ChooseNodeOf1213(benchmark::State& state) {
  const WorkloadMix mix = OpenbLikeMix();
  std::vector<GpuNodeFree> nodes(1213, PartlyUsedNode());
  for (size_t i = 0; i < nodes.size(); ++i)
    nodes[i].gpu_milli[i % 8] = static_cast<int32_t>(i % 1001);
  const GpuPodRequest pod = Pod(1, 460);
  for (auto _ : state) {
    std::optional<GpuPlacement> best;
    for (const GpuNodeFree& node : nodes) {
      std::optional<GpuPlacement> placement = PlanPlacement(node, pod, mix);
      if (placement && (!best || IsBetterPlacement(*placement, *best))) best = std::move(placement);
    }
    benchmark::DoNotOptimize(best);
  }
}
BENCHMARK(BM_ChooseNodeOf1213)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace strata::scheduler

BENCHMARK_MAIN();
