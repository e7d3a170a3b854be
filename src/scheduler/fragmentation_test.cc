#include "scheduler/fragmentation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

GpuPodRequest Fraction(int32_t milli, int64_t cpu_milli = 1000) {
  GpuPodRequest pod;
  pod.cpu_milli = cpu_milli;
  pod.memory_mib = 1024;
  pod.gpu_count = 1;
  pod.gpu_milli_each = milli;
  return pod;
}

GpuPodRequest WholeGpus(int32_t count, int64_t cpu_milli = 1000) {
  GpuPodRequest pod = Fraction(kMilliGpuPerGpu, cpu_milli);
  pod.gpu_count = count;
  return pod;
}

GpuNodeFree Node(std::vector<int32_t> gpu_milli, std::string model = "V100M32") {
  return GpuNodeFree{.gpu_model = std::move(model),
                     .cpu_milli = 64000,
                     .memory_mib = 262144,
                     .gpu_milli = std::move(gpu_milli)};
}

WorkloadMix Mix(std::vector<WeightedPodShape> shapes) { return WorkloadMix{std::move(shapes)}; }

TEST(FragmentationTest, ExpectedFragmentationWeighsWhatEachShapeCannotUse) {
  // Shape 0.5 GPU: only the 300 is too small. Whole GPU: 300 + 600 are too small.
  const WorkloadMix mix = Mix({{Fraction(500), 0.25}, {WholeGpus(1), 0.75}});
  EXPECT_DOUBLE_EQ(ExpectedFragmentation(Node({1000, 300, 600}), mix), 0.25 * 300 + 0.75 * 900);
}

TEST(FragmentationTest, ShapeThatCannotFitMakesAllIdleCapacityFragmented) {
  const double idle = 1000 + 300;
  // Two whole GPUs never fit on a node with one free GPU.
  EXPECT_DOUBLE_EQ(ExpectedFragmentation(Node({1000, 300}), Mix({{WholeGpus(2), 1}})), idle);
  // A CPU-only shape uses no GPU at all.
  EXPECT_DOUBLE_EQ(ExpectedFragmentation(Node({1000, 300}), Mix({{WholeGpus(0), 1}})), idle);
  // Too little CPU left for the shape.
  EXPECT_DOUBLE_EQ(ExpectedFragmentation(Node({1000, 300}), Mix({{Fraction(100, 70000), 1}})),
                   idle);
}

TEST(FragmentationTest, ShapeTheNodeCouldNeverHoldIsNoPartOfItsFragmentation) {
  // A shape restricted to another model, and one with more GPUs than the node has: their pods go
  // elsewhere, so strata's measure ignores them; FGD's counts all idle capacity as fragmented.
  GpuPodRequest t4_only = Fraction(100);
  t4_only.allowed_gpu_models = {"T4"};
  const GpuNodeFree node = Node({1000, 300});
  const double idle = 1000 + 300;
  for (const GpuPodRequest& shape : {t4_only, WholeGpus(4)}) {
    const WorkloadMix mix = Mix({{shape, 0.5}, {Fraction(500), 0.5}});
    EXPECT_DOUBLE_EQ(ExpectedFragmentation(node, mix), 0.5 * 300);
    EXPECT_DOUBLE_EQ(ExpectedFragmentation(node, mix, FragmentationModel::kSinglePod),
                     0.5 * idle + 0.5 * 300);
    EXPECT_DOUBLE_EQ(NeverHeldWeight(mix, node), 0.5);
  }
  // Two GPUs fit the node empty: a shape of two is fragmented, not ignored, once one is taken.
  EXPECT_DOUBLE_EQ(ExpectedFragmentation(node, Mix({{WholeGpus(2), 1}})), idle);
}

TEST(FragmentationTest, GpusBehindExhaustedCpuAreFragmented) {
  // Four free GPUs but CPU for one more 11-core pod: three GPUs can never be used by that shape.
  GpuNodeFree node = Node({1000, 1000, 1000, 1000});
  node.cpu_milli = 20000;
  EXPECT_DOUBLE_EQ(ExpectedFragmentation(node, Mix({{WholeGpus(1, 11000), 1}})), 3000);
  // FGD's single-pod measure sees one pod fit and calls the node unfragmented.
  EXPECT_DOUBLE_EQ(
      ExpectedFragmentation(node, Mix({{WholeGpus(1, 11000), 1}}), FragmentationModel::kSinglePod),
      0);
  // With CPU for all four, nothing is stranded.
  node.cpu_milli = 44000;
  EXPECT_DOUBLE_EQ(ExpectedFragmentation(node, Mix({{WholeGpus(1, 11000), 1}})), 0);
  // CPU for two pods of a fraction: the two fullest GPUs with room are used, the rest is not.
  node = Node({1000, 600, 500, 200});
  node.cpu_milli = 8000;
  EXPECT_DOUBLE_EQ(ExpectedFragmentation(node, Mix({{Fraction(500, 4000), 1}})), 500 + 200);
}

TEST(FragmentationTest, CpuStrandingIsMeasuredAtTheMixMeanCpuPerGpu) {
  // Light (2 cores) and heavy (18 cores) one-GPU pods, equally likely: 10 cores per GPU on
  // average. A fresh 8-GPU, 96-core node feeds eight such pods, so nothing is stranded, though
  // eight heavy pods alone would not fit.
  const WorkloadMix mix = Mix({{WholeGpus(1, 2000), 0.5}, {WholeGpus(1, 18000), 0.5}});
  GpuNodeFree node = Node({1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000});
  node.cpu_milli = 96000;
  EXPECT_DOUBLE_EQ(ExpectedFragmentation(node, mix), 0);
  // Four free GPUs and 20 cores feed two average pods: two GPUs are stranded for either shape.
  node = Node({1000, 1000, 1000, 1000});
  node.cpu_milli = 20000;
  EXPECT_DOUBLE_EQ(ExpectedFragmentation(node, mix), 2000);
}

TEST(FragmentationTest, GpusLeftOverByAMultiGpuShapeAreFragmented) {
  // Pairs of GPUs: the third free GPU cannot serve a 2-GPU pod.
  EXPECT_DOUBLE_EQ(ExpectedFragmentation(Node({1000, 1000, 1000, 0}), Mix({{WholeGpus(2), 1}})),
                   1000);
}

TEST(FragmentationTest, CpuHungryPodGoesWhereCpuPerFreeGpuStaysEnough) {
  // Expected pods take one GPU and 8 cores. On the lean node a 12-core pod would leave 4 cores
  // beside a free GPU (stranded); on the rich node every free GPU keeps its cores.
  const WorkloadMix mix = Mix({{WholeGpus(1, 8000), 1}});
  GpuNodeFree lean = Node({1000, 1000});
  lean.cpu_milli = 16000;
  GpuNodeFree rich = Node({1000, 1000});
  rich.cpu_milli = 40000;
  const auto on_lean = PlanPlacement(lean, WholeGpus(1, 12000), mix);
  const auto on_rich = PlanPlacement(rich, WholeGpus(1, 12000), mix);
  ASSERT_TRUE(on_lean.has_value());
  ASSERT_TRUE(on_rich.has_value());
  EXPECT_DOUBLE_EQ(on_lean->fragmentation_increase, 1000);
  EXPECT_DOUBLE_EQ(on_rich->fragmentation_increase, 0);
  EXPECT_TRUE(IsBetterPlacement(*on_rich, *on_lean));
}

TEST(FragmentationTest, FractionGoesWhereTheRemainderStaysUsable) {
  // Expected pods take 0.3 GPU. A 0.4 pod on the 550 GPU would strand 150; on the 700 GPU it
  // leaves exactly one usable 0.3 slot, and that is tighter than breaking into the free GPU.
  const auto placement =
      PlanPlacement(Node({1000, 700, 550}), Fraction(400), Mix({{Fraction(300), 1}}));
  ASSERT_TRUE(placement.has_value());
  EXPECT_THAT(placement->gpu_indices, ElementsAre(1));
  EXPECT_DOUBLE_EQ(placement->fragmentation_increase, 0);
  EXPECT_EQ(placement->gpu_milli_left_after, 1000 + 700 + 550 - 400);
}

TEST(FragmentationTest, FractionUsesFragmentRatherThanBreakingAFreeGpu) {
  const WorkloadMix mix = Mix({{Fraction(500), 0.5}, {WholeGpus(1), 0.5}});
  const auto placement = PlanPlacement(Node({1000, 1000, 500}), Fraction(500), mix);
  ASSERT_TRUE(placement.has_value());
  EXPECT_THAT(placement->gpu_indices, ElementsAre(2));
  // Before: whole GPUs cannot use the 500 (0.5 * 500). After: nothing idle is stranded.
  EXPECT_DOUBLE_EQ(placement->fragmentation_increase, -250);
}

TEST(FragmentationTest, WholeGpuPodPrefersNodeWhereItBreaksNoFullNode) {
  const WorkloadMix mix = Mix({{WholeGpus(8), 0.2}, {WholeGpus(1), 0.8}});
  const GpuNodeFree empty = Node({1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000});
  const GpuNodeFree busy = Node({0, 0, 0, 0, 1000, 1000, 0, 0});
  const auto on_empty = PlanPlacement(empty, WholeGpus(1), mix);
  const auto on_busy = PlanPlacement(busy, WholeGpus(1), mix);
  ASSERT_TRUE(on_empty.has_value());
  ASSERT_TRUE(on_busy.has_value());
  EXPECT_THAT(on_empty->gpu_indices, ElementsAre(0));
  EXPECT_THAT(on_busy->gpu_indices, ElementsAre(4));
  EXPECT_TRUE(IsBetterPlacement(*on_busy, *on_empty));
  EXPECT_FALSE(IsBetterPlacement(*on_empty, *on_busy));
}

TEST(FragmentationTest, PlacementScoreSquashesTheIncrease) {
  const auto with_increase = [](double increase) {
    GpuPlacement placement;
    placement.fragmentation_increase = increase;
    return placement;
  };
  EXPECT_EQ(PlacementScore(with_increase(0)), 50);
  EXPECT_EQ(PlacementScore(with_increase(700)), 26);  // 100 * sigmoid(-1)
  EXPECT_EQ(PlacementScore(with_increase(-700)), 73);
  EXPECT_EQ(PlacementScore(with_increase(-1e6)), 100);
  // Near-equal increases share a score, so the caller's node order decides between them.
  EXPECT_FALSE(IsBetterPlacement(with_increase(10), with_increase(20)));
  EXPECT_FALSE(IsBetterPlacement(with_increase(20), with_increase(10)));
  EXPECT_TRUE(IsBetterPlacement(with_increase(-300), with_increase(300)));
}

TEST(FragmentationTest, WholeGpusTakeTheLowestIndexedFreeGpus) {
  const auto placement =
      PlanPlacement(Node({500, 1000, 1000, 1000}), WholeGpus(2), Mix({{WholeGpus(1), 1}}));
  ASSERT_TRUE(placement.has_value());
  EXPECT_THAT(placement->gpu_indices, ElementsAre(1, 2));
}

TEST(FragmentationTest, CpuOnlyPodTakesNoGpuButCountsCpuStarvation) {
  const WorkloadMix mix = Mix({{WholeGpus(1, 8000), 1}});
  GpuNodeFree node = Node({1000, 1000});
  node.cpu_milli = 10000;
  const auto placement = PlanPlacement(node, WholeGpus(0, 4000), mix);
  ASSERT_TRUE(placement.has_value());
  EXPECT_THAT(placement->gpu_indices, IsEmpty());
  // Before, 10000 CPU served one 8000-CPU GPU pod (one GPU stranded); 6000 CPU left serves none,
  // so the second GPU is stranded too.
  EXPECT_DOUBLE_EQ(placement->fragmentation_increase, 1000);
}

TEST(FragmentationTest, GpuModelConstraintIsRespected) {
  GpuPodRequest pod = Fraction(500);
  pod.allowed_gpu_models = {"V100M16", "V100M32"};
  EXPECT_TRUE(Fits(Node({1000}, "V100M32"), pod));
  EXPECT_FALSE(Fits(Node({1000}, "T4"), pod));
  EXPECT_FALSE(PlanPlacement(Node({1000}, "T4"), pod, Mix({})).has_value());
}

TEST(FragmentationTest, MemoryAndGpusAreNeverOvercommitted) {
  GpuNodeFree node = Node({1000, 400});
  node.memory_mib = 2048;
  GpuPodRequest big_memory = Fraction(100);
  big_memory.memory_mib = 4096;
  EXPECT_FALSE(Fits(node, big_memory));
  EXPECT_FALSE(PlanPlacement(node, big_memory, Mix({})).has_value());
  EXPECT_FALSE(Fits(node, WholeGpus(2)));
  EXPECT_FALSE(Fits(Node({600, 600}), Fraction(700)));
  EXPECT_TRUE(Fits(Node({600, 700}), Fraction(700)));
}

TEST(FragmentationTest, EmptyMixStillPacksTightly) {
  const auto placement = PlanPlacement(Node({1000, 700, 550}), Fraction(400), Mix({}));
  ASSERT_TRUE(placement.has_value());
  EXPECT_THAT(placement->gpu_indices, ElementsAre(2));
}

TEST(FragmentationTest, EstimateWorkloadMixKeepsMostFrequentShapesUpToCoverage) {
  std::vector<GpuPodRequest> observed;
  for (int i = 0; i < 6; ++i) observed.push_back(Fraction(500));
  for (int i = 0; i < 3; ++i) observed.push_back(WholeGpus(1));
  observed.push_back(WholeGpus(8));
  const WorkloadMix mix = EstimateWorkloadMix(observed, {.coverage = 0.9});
  ASSERT_EQ(mix.shapes.size(), 2u);
  EXPECT_EQ(mix.shapes[0].shape.gpu_milli_each, 500);
  EXPECT_DOUBLE_EQ(mix.shapes[0].weight, 6.0 / 9);
  EXPECT_EQ(mix.shapes[1].shape.gpu_count, 1);
  EXPECT_DOUBLE_EQ(mix.shapes[1].weight, 3.0 / 9);
}

TEST(FragmentationTest, EstimateWorkloadMixBreaksTiesByLargerCpuThenMilliThenCount) {
  const std::vector<GpuPodRequest> observed = {Fraction(200, 1000), Fraction(300, 1000),
                                               Fraction(100, 2000), WholeGpus(2, 1000)};
  const WorkloadMix mix = EstimateWorkloadMix(observed, {.coverage = 1.0});
  ASSERT_EQ(mix.shapes.size(), 4u);
  EXPECT_EQ(mix.shapes[0].shape.cpu_milli, 2000);
  EXPECT_EQ(mix.shapes[1].shape.gpu_milli_each, 1000);
  EXPECT_EQ(mix.shapes[2].shape.gpu_milli_each, 300);
  EXPECT_EQ(mix.shapes[3].shape.gpu_milli_each, 200);
  EXPECT_TRUE(EstimateWorkloadMix({}).shapes.empty());
}

}  // namespace
}  // namespace strata::scheduler
