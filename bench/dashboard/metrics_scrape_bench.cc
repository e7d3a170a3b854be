// GET /metrics on the control plane's REST API, wired as `strata up` wires it (the API's own
// families plus the cluster collector: every GPU under the DCGM names, GPU roll-ups, cost), at
// 1,000 nodes x 8 GPUs, 1,000 running 8-GPU pods and 10,000 pending jobs in 4 queues. Each
// benchmark is one dashboard read: the whole page, the Queues page's four families, the
// Cluster page's GPU utilisation, and one cost family, alone and after one pod was written.

#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "api/object.h"
#include "common/check.h"
#include "observe/cluster_cost.h"
#include "observe/test_cluster.h"
#include "server/rest_api.h"

namespace strata::server {
namespace {

constexpr int kNodes = 1000;
constexpr int kGpusPerNode = 8;
constexpr int kPendingJobs = 10000;
constexpr int kQueues = 4;

api::Queue TeamQueue(const std::string& team) {
  api::Queue queue;
  queue.metadata.name = team + "-cq";
  queue.spec.cohort = "pool";
  queue.spec.flavors = {{"h100", {{"gpu", Quantity::FromUnits(2000), {}, {}}}}};
  queue.spec.local_queues = {{team, team}};
  return queue;
}

api::Job PendingJob(int index) {
  const std::string team = "team-" + std::to_string(index % kQueues);
  api::Job job;
  job.metadata.name = "job-" + std::to_string(index);
  job.metadata.namespace_name = team;
  job.spec.replicas = 2;
  job.spec.queue = team;
  job.spec.resources.gpu = Quantity::FromUnits(8);
  job.spec.template_.command = {"python3", "train.py"};
  return job;
}

// The store and the API over it; the first scrape (which lists the store and starts the
// cluster-state watch) is done before any timing.
class ScrapedCluster {
 public:
  ScrapedCluster() : store_(store::NewMemoryStore({})) {
    for (int q = 0; q < kQueues; ++q) {
      observe::testing::Put(*store_, TeamQueue("team-" + std::to_string(q)));
    }
    for (int n = 0; n < kNodes; ++n) {
      const std::string node = "sim-node-" + std::to_string(n);
      observe::testing::Put(*store_, observe::testing::GpuNode(node, kGpusPerNode, true));
      observe::testing::Put(*store_,
                            observe::testing::BoundPod("train-" + std::to_string(n), node,
                                                       {0, 1, 2, 3, 4, 5, 6, 7}, "Running"));
    }
    for (int j = 0; j < kPendingJobs; ++j) observe::testing::Put(*store_, PendingJob(j));
    RestApiOptions options;
    options.tokens.push_back({"admin", "admin", {}});
    api_ = std::make_unique<RestApi>(*store_, registry_, options);
    observe::AddClusterMetrics(registry_, std::make_shared<observe::ClusterObjectsCache>(*store_),
                               observe::ClusterMetricsOptions{});
    Scrape("/metrics");
  }

  // Writes pod "train-<n % kNodes>" again with annotation bench/touch=<n>, as a controller's
  // status update would: a change for the caches behind /metrics to follow.
  void TouchPod(int64_t n) {
    const std::string index = std::to_string(n % kNodes);
    api::Pod pod = observe::testing::BoundPod("train-" + index, "sim-node-" + index,
                                              {0, 1, 2, 3, 4, 5, 6, 7}, "Running");
    pod.metadata.annotations["bench/touch"] = std::to_string(n);
    STRATA_CHECK(store_->Apply({{store::WriteOp::kUpsert, observe::testing::StoredObject(pod)}})
                     .has_value());
  }

  // The body of GET `target`.
  std::string Scrape(const std::string& target) {
    net::HttpRequest request;
    request.method = "GET";
    request.target = target;
    request.headers.push_back({"Authorization", "Bearer admin"});
    return api_->Handle(request).response.body;
  }

 private:
  std::unique_ptr<store::Store> store_;
  metrics::Registry registry_;
  std::unique_ptr<RestApi> api_;
};

ScrapedCluster& Cluster() {
  static ScrapedCluster* cluster = new ScrapedCluster();
  return *cluster;
}

void ScrapeLoop(benchmark::State& state, const std::string& target) {
  ScrapedCluster& cluster = Cluster();
  size_t bytes = 0;
  for (auto _ : state) {
    std::string page = cluster.Scrape(target);
    bytes = page.size();
    benchmark::DoNotOptimize(page.data());
  }
  state.counters["page_bytes"] = static_cast<double>(bytes);
}

void BM_WholePage(benchmark::State& state) { ScrapeLoop(state, "/metrics"); }
BENCHMARK(BM_WholePage)->Unit(benchmark::kMillisecond);

void BM_QueuesPage(benchmark::State& state) {
  ScrapeLoop(state,
             "/metrics?families=strata_queue_usage,strata_queue_nominal_quota,"
             "strata_queue_borrowed,strata_queue_pending_workloads");
}
BENCHMARK(BM_QueuesPage)->Unit(benchmark::kMillisecond);

void BM_ClusterPageGpuUtil(benchmark::State& state) {
  ScrapeLoop(state, "/metrics?families=DCGM_FI_DEV_GPU_UTIL");
}
BENCHMARK(BM_ClusterPageGpuUtil)->Unit(benchmark::kMillisecond);

void BM_CostAccruedOnly(benchmark::State& state) {
  ScrapeLoop(state, "/metrics?families=strata_cost_accrued");
}
BENCHMARK(BM_CostAccruedOnly)->Unit(benchmark::kMillisecond);

// One pod written between scrapes: the scrape brings the caches up to date with that write
// (decoding the pod again) before rendering. Process CPU time, so that the share of the work
// the caches' follower threads do is counted.
void BM_CostAccruedAfterAPodWrite(benchmark::State& state) {
  ScrapedCluster& cluster = Cluster();
  int64_t writes = 0;
  size_t bytes = 0;
  for (auto _ : state) {
    cluster.TouchPod(writes++);
    std::string page = cluster.Scrape("/metrics?families=strata_cost_accrued");
    bytes = page.size();
    benchmark::DoNotOptimize(page.data());
  }
  state.counters["page_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_CostAccruedAfterAPodWrite)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

}  // namespace
}  // namespace strata::server

BENCHMARK_MAIN();
