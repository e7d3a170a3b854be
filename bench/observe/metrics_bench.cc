// /metrics at 1,000 nodes x 8 GPUs (issue 7's size): how long one scrape takes to render,
// beside the DCGM exporter's default collection interval of 30 s.

#include <benchmark/benchmark.h>

#include "telemetry/cluster_cost.h"
#include "telemetry/gpu_metrics.h"
#include "telemetry/test_cluster.h"

namespace strata::telemetry {
namespace {

constexpr int kNodes = 1000;
constexpr int kGpusPerNode = 8;

// Every GPU held: half by 8-GPU training pods, half by 1-GPU service replicas.
std::vector<GpuSample> BusyClusterSamples() {
  std::vector<GpuSample> samples;
  for (int n = 0; n < kNodes; ++n) {
    for (int g = 0; g < kGpusPerNode; ++g) {
      GpuSample sample;
      sample.hostname = "sim-node-" + std::to_string(n);
      sample.gpu = g;
      sample.uuid = "GPU-" + sample.hostname + "-" + std::to_string(g);
      sample.model_name = "H100-80GB";
      sample.simulated = true;
      GpuHolder holder;
      holder.namespace_name = "default";
      holder.queue = n % 2 == 0 ? "research" : "inference";
      holder.team = n % 2 == 0 ? "ml" : "serving";
      holder.running = true;
      if (n % 2 == 0) {
        holder.pod = "train-" + std::to_string(n) + "-0";
        holder.job = "train-" + std::to_string(n);
      } else {
        holder.pod = "llm-" + std::to_string(n * kGpusPerNode + g);
        holder.service = "llm";
      }
      sample.holders = {holder};
      sample.reading = SimulatedGpuReading(sample.model_name, 80LL << 30, sample.holders);
      samples.push_back(std::move(sample));
    }
  }
  return samples;
}

void BM_RenderGpuMetrics(benchmark::State& state) {
  std::vector<GpuSample> samples = BusyClusterSamples();
  size_t bytes = 0;
  for (auto _ : state) {
    std::string out;
    RenderGpuMetrics(samples, out);
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["page_bytes"] = static_cast<double>(bytes);
  state.counters["gpus"] = static_cast<double>(samples.size());
}
BENCHMARK(BM_RenderGpuMetrics)->Unit(benchmark::kMillisecond);

// The scrape as the control plane runs it: list and decode every Node and Pod from the store,
// derive simulated readings, render the GPU series and the cost roll-ups.
void BM_ScrapeCluster(benchmark::State& state) {
  std::unique_ptr<store::Store> store = store::NewMemoryStore({});
  for (int n = 0; n < kNodes; ++n) {
    std::string node = "sim-node-" + std::to_string(n);
    testing::Put(*store, testing::GpuNode(node, kGpusPerNode, true));
    testing::Put(*store, testing::BoundPod("train-" + std::to_string(n), node,
                                           {0, 1, 2, 3, 4, 5, 6, 7}, "Running"));
  }
  Registry registry;
  AddClusterMetrics(registry, *store, ClusterMetricsOptions{});
  size_t bytes = 0;
  for (auto _ : state) {
    std::string page = registry.RenderText();
    bytes = page.size();
    benchmark::DoNotOptimize(page.data());
  }
  state.counters["page_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_ScrapeCluster)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata::telemetry

BENCHMARK_MAIN();
