#include "observe/gpu_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "metrics/family_parts_check.h"
#include "metrics/prometheus_text.h"

namespace strata::observe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t k80GiB = 80LL << 30;

GpuHolder RunningJobPod(std::string pod, double share, std::string queue, std::string team) {
  GpuHolder holder;
  holder.pod = std::move(pod);
  holder.namespace_name = "default";
  holder.job = "train";
  holder.queue = std::move(queue);
  holder.team = std::move(team);
  holder.share = share;
  holder.running = true;
  return holder;
}

GpuSample MakeGpu(std::string host, int64_t index, std::vector<GpuHolder> holders,
                  double utilization) {
  GpuSample sample;
  sample.hostname = std::move(host);
  sample.gpu = index;
  sample.uuid = "GPU-" + sample.hostname + "-" + std::to_string(index);
  sample.model_name = "H100-80GB";
  sample.holders = std::move(holders);
  sample.reading.utilization_percent = utilization;
  return sample;
}

const metrics::Sample* Find(const std::vector<metrics::Sample>& samples, std::string_view name,
                            std::string_view uuid) {
  for (const metrics::Sample& sample : samples) {
    const std::string* label = sample.Label("UUID");
    if (sample.name == name && label != nullptr && *label == uuid) return &sample;
  }
  return nullptr;
}

TEST(SimulatedGpuReadingTest, AFreeGpuIdlesAtItsIdleFigures) {
  GpuReading reading = SimulatedGpuReading("H100-80GB", k80GiB, {});
  EXPECT_EQ(reading.utilization_percent, 0);
  EXPECT_EQ(reading.fb_used_mib, 0);
  EXPECT_EQ(reading.fb_free_mib, 81920);
  EXPECT_EQ(reading.power_watts, 70);
  EXPECT_EQ(reading.sm_clock_mhz, 345);
  EXPECT_EQ(reading.last_xid, 0);
  EXPECT_EQ(reading.ecc_dbe_volatile, 0);
}

TEST(SimulatedGpuReadingTest, ARunningTrainingPodKeepsTheGpuBusy) {
  GpuReading reading =
      SimulatedGpuReading("H100-80GB", k80GiB, {RunningJobPod("train-0", 1.0, "q", "ml")});
  EXPECT_EQ(reading.utilization_percent, 92);
  EXPECT_EQ(reading.fb_used_mib, 73728);  // 90 % of 80 GiB
  EXPECT_EQ(reading.fb_free_mib, 81920 - 73728);
  EXPECT_GT(reading.power_watts, 600);
  EXPECT_LE(reading.power_watts, 700);
  EXPECT_EQ(reading.sm_clock_mhz, 1980);
}

TEST(SimulatedGpuReadingTest, AMeasuredHolderKeepsItsShareAsBusyAsMeasured) {
  GpuHolder sleeping = RunningJobPod("train-0", 1.0, "q", "ml");
  sleeping.activity = 0.03;
  GpuReading idle = SimulatedGpuReading("H100-80GB", k80GiB, {sleeping});
  EXPECT_EQ(idle.utilization_percent, 3);
  EXPECT_LT(idle.power_watts, 100);
  // Two half shares: one measured busy, one not measured yet (a job's typical 92 %).
  GpuHolder busy = RunningJobPod("a-0", 0.5, "q", "ml");
  busy.activity = 1.0;
  GpuReading shared =
      SimulatedGpuReading("H100-80GB", k80GiB, {busy, RunningJobPod("b-0", 0.5, "q", "ml")});
  EXPECT_EQ(shared.utilization_percent, 96);
}

TEST(SimulatedGpuReadingTest, ABoundPodThatDoesNotRunYetUsesNothing) {
  GpuHolder pending = RunningJobPod("train-0", 1.0, "q", "ml");
  pending.running = false;
  GpuReading reading = SimulatedGpuReading("A100-40GB", 40LL << 30, {pending});
  EXPECT_EQ(reading.utilization_percent, 0);
  EXPECT_EQ(reading.fb_used_mib, 0);
  EXPECT_EQ(reading.power_watts, 50);
}

TEST(SimulatedGpuReadingTest, FractionalSharesUseTheirReservedMemory) {
  GpuHolder engine;
  engine.pod = "llm-0";
  engine.service = "llm";
  engine.share = 0.5;
  engine.memory_bytes = 20LL << 30;
  engine.running = true;
  GpuReading reading = SimulatedGpuReading("H100-80GB", k80GiB, {engine});
  EXPECT_EQ(reading.fb_used_mib, 20480);
  EXPECT_EQ(reading.utilization_percent, 28);  // half a GPU, an engine's 55 % activity
}

TEST(SummariseGpuUsageTest, AllocationAndUseRollUpByNodeQueueAndTeam) {
  std::vector<GpuSample> samples = {
      MakeGpu("n0", 0, {RunningJobPod("a", 1.0, "research", "ml")}, 90),
      MakeGpu("n0", 1,
              {RunningJobPod("b", 0.5, "research", "ml"), RunningJobPod("c", 0.5, "prod", "web")},
              40),
      MakeGpu("n1", 0, {}, 10),  // a stray process on a free GPU
      MakeGpu("n1", 1, {}, GpuReading::kUnknown),
  };
  std::vector<GpuUsage> usage = SummariseGpuUsage(samples);
  ASSERT_EQ(usage.size(), 7u);
  EXPECT_EQ(usage[0].scope, "cluster");
  EXPECT_DOUBLE_EQ(usage[0].capacity, 4);
  EXPECT_DOUBLE_EQ(usage[0].allocated, 2);
  EXPECT_DOUBLE_EQ(usage[0].busy, 1.4);
  EXPECT_EQ(usage[1].name, "n0");
  EXPECT_DOUBLE_EQ(usage[1].allocated, 2);
  EXPECT_DOUBLE_EQ(usage[1].busy, 1.3);
  EXPECT_EQ(usage[2].name, "n1");
  EXPECT_DOUBLE_EQ(usage[2].allocated, 0);
  EXPECT_DOUBLE_EQ(usage[2].busy, 0.1);
  EXPECT_EQ(usage[3].scope, "queue");
  EXPECT_EQ(usage[3].name, "prod");
  EXPECT_DOUBLE_EQ(usage[3].allocated, 0.5);
  EXPECT_DOUBLE_EQ(usage[3].busy, 0.2);
  EXPECT_EQ(usage[4].name, "research");
  EXPECT_DOUBLE_EQ(usage[4].allocated, 1.5);
  EXPECT_DOUBLE_EQ(usage[4].busy, 1.1);
  EXPECT_EQ(usage[5].scope, "team");
  EXPECT_EQ(usage[5].name, "ml");
  EXPECT_EQ(usage[6].name, "web");
}

TEST(SummariseGpuUsageTest, RatiosAreOfTheScopesOwnGpusOrOfTheClustersForQueuesAndTeams) {
  std::vector<GpuSample> samples = {
      MakeGpu("n0", 0, {RunningJobPod("a", 1.0, "research", "ml")}, 90),
      MakeGpu("n0", 1, {RunningJobPod("b", 0.5, "research", "ml")}, 40),
      MakeGpu("n1", 0, {}, 0),
      MakeGpu("n1", 1, {}, 0),
  };
  std::vector<GpuUsage> usage = SummariseGpuUsage(samples);
  ASSERT_EQ(usage.size(), 5u);
  double cluster = usage[0].capacity;
  EXPECT_DOUBLE_EQ(AllocatedRatio(usage[0], cluster), 1.5 / 4);
  EXPECT_DOUBLE_EQ(BusyRatio(usage[0], cluster), 1.3 / 4);
  EXPECT_DOUBLE_EQ(AllocatedRatio(usage[1], cluster), 1.5 / 2);  // node n0
  EXPECT_DOUBLE_EQ(BusyRatio(usage[2], cluster), 0);             // node n1
  EXPECT_EQ(usage[3].scope, "queue");
  EXPECT_DOUBLE_EQ(AllocatedRatio(usage[3], cluster), 1.5 / 4);
  EXPECT_DOUBLE_EQ(BusyRatio(usage[4], cluster), 1.3 / 4);  // team ml
  EXPECT_DOUBLE_EQ(AllocatedRatio(usage[4], 0), 0);
}

TEST(RenderGpuMetricsTest, AllocatedAndBusyRatiosPerGpuAndScope) {
  std::vector<GpuSample> samples = {
      MakeGpu("n0", 0, {RunningJobPod("a", 0.5, "research", "ml")}, 40),
      MakeGpu("n0", 1, {}, GpuReading::kUnknown),
  };
  std::string out;
  RenderGpuMetrics(samples, out);
  EXPECT_THAT(out, HasSubstr("# TYPE strata_gpu_allocated_ratio gauge\n"));
  EXPECT_THAT(out, HasSubstr("strata_gpu_allocated_ratio{scope=\"gpu\",name=\"n0/0\"} 0.5\n"));
  EXPECT_THAT(out, HasSubstr("strata_gpu_allocated_ratio{scope=\"gpu\",name=\"n0/1\"} 0\n"));
  EXPECT_THAT(out, HasSubstr("strata_gpu_busy_ratio{scope=\"gpu\",name=\"n0/0\"} 0.4\n"));
  // Unknown utilisation is not reported as idle.
  EXPECT_THAT(out, Not(HasSubstr("strata_gpu_busy_ratio{scope=\"gpu\",name=\"n0/1\"}")));
  EXPECT_THAT(out, HasSubstr("strata_gpu_allocated_ratio{scope=\"node\",name=\"n0\"} 0.25\n"));
  EXPECT_THAT(out, HasSubstr("strata_gpu_busy_ratio{scope=\"cluster\",name=\"\"} 0.2\n"));
  EXPECT_THAT(out,
              HasSubstr("strata_gpu_allocated_ratio{scope=\"queue\",name=\"research\"} 0.25\n"));
  EXPECT_THAT(out, HasSubstr("strata_gpu_busy_ratio{scope=\"team\",name=\"ml\"} 0.2\n"));
  ASSERT_TRUE(metrics::ParsePrometheusText(out));
}

TEST(RenderGpuMetricsTest, DcgmNamesWithTheExporterLabelsAndTheHolder) {
  GpuSample busy = MakeGpu("n0", 3, {RunningJobPod("train-0", 1.0, "research", "ml")}, 87);
  busy.simulated = true;
  busy.reading.fb_used_mib = 1000;
  GpuSample free = MakeGpu("n0", 4, {}, 0);
  std::string out;
  RenderGpuMetrics({busy, free}, out);

  Result<std::vector<metrics::Sample>> parsed = metrics::ParsePrometheusText(out);
  ASSERT_TRUE(parsed) << parsed.error().ToString() << "\n" << out;
  const metrics::Sample* util = Find(*parsed, "DCGM_FI_DEV_GPU_UTIL", "GPU-n0-3");
  ASSERT_NE(util, nullptr) << out;
  EXPECT_EQ(util->value, 87);
  EXPECT_EQ(*util->Label("gpu"), "3");
  EXPECT_EQ(*util->Label("device"), "nvidia3");
  EXPECT_EQ(*util->Label("modelName"), "H100-80GB");
  EXPECT_EQ(*util->Label("Hostname"), "n0");
  EXPECT_EQ(*util->Label("simulated"), "true");
  EXPECT_EQ(*util->Label("pod"), "train-0");
  EXPECT_EQ(*util->Label("namespace"), "default");
  EXPECT_EQ(*util->Label("strata_job"), "train");
  EXPECT_EQ(*util->Label("service"), "");
  EXPECT_EQ(*util->Label("queue"), "research");
  const metrics::Sample* idle = Find(*parsed, "DCGM_FI_DEV_GPU_UTIL", "GPU-n0-4");
  ASSERT_NE(idle, nullptr);
  EXPECT_EQ(*idle->Label("pod"), "");
  EXPECT_EQ(*idle->Label("simulated"), "false");
  // What was not read is left out, not reported as zero.
  EXPECT_NE(Find(*parsed, "DCGM_FI_DEV_FB_USED", "GPU-n0-3"), nullptr);
  EXPECT_EQ(Find(*parsed, "DCGM_FI_DEV_FB_USED", "GPU-n0-4"), nullptr);
  EXPECT_EQ(Find(*parsed, "DCGM_FI_DEV_POWER_USAGE", "GPU-n0-3"), nullptr);
  EXPECT_THAT(out, HasSubstr("# TYPE DCGM_FI_DEV_ECC_DBE_VOL_TOTAL counter\n"));
  EXPECT_THAT(out, HasSubstr("# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n"));
  EXPECT_THAT(out, HasSubstr("strata_gpu_allocated_gpus{scope=\"queue\",name=\"research\"} 1\n"));
  EXPECT_THAT(out, HasSubstr("strata_gpu_busy_gpus{scope=\"node\",name=\"n0\"} 0.87\n"));
  EXPECT_THAT(out, HasSubstr("strata_gpu_capacity_gpus{scope=\"cluster\",name=\"\"} 2\n"));
  EXPECT_THAT(out, Not(HasSubstr("strata_gpu_capacity_gpus{scope=\"queue\"")));
}

TEST(RenderGpuMetricsTest, SeveralHoldersOfOneGpuAreJoinedOnce) {
  GpuSample shared = MakeGpu(
      "n0", 0,
      {RunningJobPod("a", 0.5, "research", "ml"), RunningJobPod("b", 0.5, "research", "ml")}, 50);
  std::string out;
  RenderGpuMetrics({shared}, out);
  EXPECT_THAT(out, HasSubstr("pod=\"a,b\",strata_job=\"train\",service=\"\",queue=\"research\"}"));
}

TEST(RenderGpuMetricsTest, LabelValuesAreEscaped) {
  GpuSample odd = MakeGpu("host\"with\\quote", 0, {}, 1);
  std::string out;
  RenderGpuMetrics({odd}, out);
  Result<std::vector<metrics::Sample>> parsed = metrics::ParsePrometheusText(out);
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(*parsed->front().Label("Hostname"), "host\"with\\quote");
}

TEST(RenderGpuMetricsTest, EachFamilyAloneIsItsPartOfTheWholeRendering) {
  std::vector<GpuSample> samples = {
      MakeGpu("n0", 0, {RunningJobPod("a", 0.5, "research", "ml")}, 40),
      MakeGpu("n0", 1, {}, GpuReading::kUnknown),
  };
  EXPECT_EQ(metrics::testing::FamilyPartsMismatch(
                GpuMetricFamilies(),
                [&samples](const metrics::FamilySelection& wanted, std::string& out) {
                  RenderGpuMetrics(samples, out, wanted);
                }),
            "");
}

}  // namespace
}  // namespace strata::observe
