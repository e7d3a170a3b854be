// /metrics at 1,000 nodes x 8 GPUs (issue 7's size): how long one scrape takes to render,
// beside the DCGM exporter's default collection interval of 30 s.

#include <benchmark/benchmark.h>

#include "common/check.h"
#include "observe/cluster_cost.h"
#include "observe/gpu_metrics.h"
#include "observe/test_cluster.h"
#include "server/rest_api.h"

namespace strata::observe {
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
  metrics::Registry registry;
  AddClusterMetrics(registry, std::make_shared<ClusterObjectsCache>(*store),
                    ClusterMetricsOptions{});
  size_t bytes = 0;
  for (auto _ : state) {
    std::string page = registry.RenderText();
    bytes = page.size();
    benchmark::DoNotOptimize(page.data());
  }
  state.counters["page_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_ScrapeCluster)->Unit(benchmark::kMillisecond);

// The control plane's own /metrics (the REST API's families: objects by kind, pods by phase,
// GPUs held and free, queue quota and use, pending workloads by queue and reason) with 1,000
// nodes of 8 GPUs, 1,000 running 8-GPU pods and 10,000 pending jobs in 4 queues, as the
// dashboard's Queues page reads it. The first scrape happens before the timing starts; every
// timed scrape then sees the same, unchanged store.
void BM_ScrapeRestApiWithPendingJobs(benchmark::State& state) {
  constexpr int kJobs = 10000;
  constexpr int kQueues = 4;
  std::unique_ptr<store::Store> store = store::NewMemoryStore({});
  for (int q = 0; q < kQueues; ++q) {
    std::string name = "team-" + std::to_string(q);
    store::Object queue;
    queue.key = {"Queue", "", name + "-cq"};
    queue.body = {
        {"apiVersion", "strata.dev/v1alpha1"},
        {"kind", "Queue"},
        {"spec",
         {{"cohort", "pool"},
          {"flavors", {{{"name", "h100"}, {"resources", {{{"name", "gpu"}, {"nominal", 2000}}}}}}},
          {"localQueues", {{{"namespace", name}, {"name", name}}}}}}};
    STRATA_CHECK(store->Create(queue).has_value());
  }
  for (int n = 0; n < kNodes; ++n) {
    std::string node = "sim-node-" + std::to_string(n);
    testing::Put(*store, testing::GpuNode(node, kGpusPerNode, true));
    testing::Put(*store, testing::BoundPod("train-" + std::to_string(n), node,
                                           {0, 1, 2, 3, 4, 5, 6, 7}, "Running"));
  }
  for (int j = 0; j < kJobs; ++j) {
    std::string team = "team-" + std::to_string(j % kQueues);
    store::Object job;
    job.key = {"Job", team, "job-" + std::to_string(j)};
    job.body = {{"apiVersion", "strata.dev/v1alpha1"},
                {"kind", "Job"},
                {"spec",
                 {{"replicas", 2},
                  {"queue", team},
                  {"resources", {{"gpu", 16}}},
                  {"template", {{"command", {"python3", "train.py"}}}}}},
                {"status",
                 {{"phase", "Pending"},
                  {"reason", j % 2 == 0 ? "WaitingForQuota" : "TopologyPlacementFailed"}}}};
    STRATA_CHECK(store->Create(job).has_value());
  }
  metrics::Registry registry;
  server::RestApiOptions options;
  options.tokens.push_back({"admin", "admin", {}});
  server::RestApi api(*store, registry, options);
  net::HttpRequest request;
  request.method = "GET";
  request.headers.push_back({"Authorization", "Bearer admin"});
  request.target = "/metrics";
  size_t bytes = api.Handle(request).response.body.size();
  for (auto _ : state) {
    server::ApiReply reply = api.Handle(request);
    bytes = reply.response.body.size();
    benchmark::DoNotOptimize(reply.response.body.data());
  }
  state.counters["page_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_ScrapeRestApiWithPendingJobs)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata::observe

BENCHMARK_MAIN();
