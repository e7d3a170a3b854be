// The cost of one pass of each control loop after one change, on a control plane holding 1,000
// nodes x 8 GPUs and N pods (held: bound and Running, no agent runs them), for N = 1,000 and
// 10,000: the cache makes a pass cost what changed, so the two should be within 2x.
//
// Each iteration changes one pod the way an agent does (a new measured GPU activity on a
// running pod) with the timer paused, then times one RunOnce of the loop (its cache Sync
// included). BM_SchedulerAfterANewPod times a change the scheduler must act on: a new pending
// pod, placed by a whole cycle.
//
// Run: <build>/bench/cluster/pass_cost_bench [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <memory>

#include "api/annotations.h"
#include "cluster/cache.h"
#include "cluster/indexes.h"
#include "cluster/stored_object.h"
#include "common/check.h"
#include "controller/job_controller.h"
#include "controller/node_controller.h"
#include "controller/scheduler_loop.h"
#include "controller/service_controller.h"
#include "metrics/metrics.h"
#include "observe/cluster_objects_cache.h"
#include "server/cluster_metrics.h"
#include "store/store.h"

namespace strata {
namespace {

constexpr int kNodes = 1000;
constexpr int kGpusPerNode = 8;

api::Node MakeNode(int index, TimePoint now) {
  api::Node node;
  node.metadata.name = fmt::format("node-{}", index);
  node.metadata.labels[api::kRackLabel] = fmt::format("rack-{}", index / 32);
  node.status.cpu = Quantity::FromUnits(224);
  node.status.memory = Quantity::FromUnits(int64_t{2} << 40);
  for (int g = 0; g < kGpusPerNode; ++g) {
    api::NodeGpu gpu;
    gpu.index = g;
    gpu.uuid = fmt::format("GPU-{}-{}", index, g);
    gpu.model = "H100-80GB";
    gpu.memory = Quantity::FromUnits(int64_t{80} << 30);
    node.status.gpus.push_back(gpu);
  }
  node.status.conditions.push_back(
      {"Ready", "True", "", "", FormatRfc3339(now), FormatRfc3339(now)});
  return node;
}

// Pod `index`, bound to a GPU of its own (or, at more pods than GPUs, to a share of one) and
// Running.
api::Pod HeldPod(int index, int pods) {
  api::Pod pod;
  pod.metadata.name = fmt::format("held-{}", index);
  pod.metadata.namespace_name = "bench";
  pod.spec.restart_policy = "Never";
  pod.spec.template_.command = {"sleep", "3600"};
  const int slots = kNodes * kGpusPerNode;
  const int per_gpu = (pods + slots - 1) / slots;
  const int slot = index / per_gpu;
  pod.spec.node_name = fmt::format("node-{}", slot / kGpusPerNode);
  api::AssignedGpu gpu;
  gpu.index = slot % kGpusPerNode;
  gpu.uuid = fmt::format("GPU-{}-{}", slot / kGpusPerNode, gpu.index);
  if (per_gpu > 1) {
    pod.spec.resources.gpu = Quantity::FromMilli(1000 / per_gpu);
    gpu.share = pod.spec.resources.gpu;
  } else {
    pod.spec.resources.gpu = Quantity::FromUnits(1);
  }
  pod.spec.assigned_gpus.push_back(gpu);
  pod.spec.resources.cpu = Quantity::FromUnits(1);
  pod.status.phase = api::PodPhase::kRunning;
  return pod;
}

// A memory store with the nodes and `pods` held pods, its cache, and one loop over them.
class HeldCluster {
 public:
  explicit HeldCluster(int pods) : store_(store::NewMemoryStore({&clock_, 1000000})) {
    for (int i = 0; i < kNodes; ++i) Write(api::Object(MakeNode(i, clock_.Now())));
    for (int i = 0; i < pods; ++i) Write(api::Object(HeldPod(i, pods)));
    cache_ = std::make_unique<cluster::Cache>(*store_, cluster::ControlPlaneCacheOptions());
    STRATA_CHECK(cache_->Sync().ok());
  }

  // What an agent writes on a running pod: its measured GPU activity, a new value each time.
  void ChangeOnePod() {
    Result<store::Object> raw = store_->Get({"Pod", "bench", "held-0"});
    STRATA_CHECK(raw.has_value());
    Result<api::Object> decoded = cluster::DecodeStoredObject(*raw);
    STRATA_CHECK(decoded.has_value());
    decoded->As<api::Pod>()->metadata.annotations[api::kGpuActivityAnnotation] =
        fmt::format("0.{:02}", ++changes_ % 100);
    STRATA_CHECK(store_->Update(cluster::EncodeForStore(*decoded, *raw)).has_value());
  }

  void AddPendingPod() {
    api::Pod pod;
    pod.metadata.name = fmt::format("new-{}", ++changes_);
    pod.metadata.namespace_name = "bench";
    pod.spec.restart_policy = "Never";
    pod.spec.template_.command = {"sleep", "3600"};
    pod.spec.resources.cpu = Quantity::FromUnits(1);
    Write(api::Object(pod));
  }

  store::Store& store() { return *store_; }
  cluster::Cache& cache() { return *cache_; }
  FakeClock& clock() { return clock_; }

 private:
  void Write(const api::Object& object) {
    STRATA_CHECK(store_->Create(cluster::EncodeForStore(object)).has_value());
  }

  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<cluster::Cache> cache_;
  int changes_ = 0;
};

template <typename Pass>
void TimePassesAfterOneChange(benchmark::State& state, HeldCluster& cluster, Pass pass) {
  STRATA_CHECK(pass().ok());  // the first pass reads everything
  for (auto _ : state) {
    state.PauseTiming();
    cluster.ChangeOnePod();
    state.ResumeTiming();
    Status status = pass();
    benchmark::DoNotOptimize(status);
  }
  state.counters["pods"] = static_cast<double>(state.range(0));
}

void BM_SchedulerLoop(benchmark::State& state) {
  HeldCluster cluster(static_cast<int>(state.range(0)));
  controller::SchedulerLoop loop(cluster.store(), cluster.cache(), cluster.clock());
  TimePassesAfterOneChange(state, cluster, [&] { return loop.RunOnce(); });
}

void BM_JobController(benchmark::State& state) {
  HeldCluster cluster(static_cast<int>(state.range(0)));
  controller::JobController loop(cluster.store(), cluster.cache(), cluster.clock());
  TimePassesAfterOneChange(state, cluster, [&] { return loop.RunOnce(); });
}

void BM_NodeController(benchmark::State& state) {
  HeldCluster cluster(static_cast<int>(state.range(0)));
  controller::NodeController loop(cluster.store(), cluster.cache(), cluster.clock());
  TimePassesAfterOneChange(state, cluster, [&] { return loop.RunOnce(); });
}

void BM_ServiceController(benchmark::State& state) {
  HeldCluster cluster(static_cast<int>(state.range(0)));
  controller::ServiceController loop(cluster.store(), cluster.cache(), cluster.clock());
  TimePassesAfterOneChange(state, cluster, [&] { return loop.RunOnce(); });
}

void BM_ClusterStateMetrics(benchmark::State& state) {
  HeldCluster cluster(static_cast<int>(state.range(0)));
  metrics::Registry registry;
  server::ClusterMetrics metrics(cluster.cache(), registry);
  TimePassesAfterOneChange(state, cluster, [&] { return metrics.Refresh(); });
}

void BM_GpuAndCostView(benchmark::State& state) {
  HeldCluster cluster(static_cast<int>(state.range(0)));
  observe::ClusterObjectsCache view(cluster.cache());
  TimePassesAfterOneChange(state, cluster, [&]() -> Status {
    Result<std::shared_ptr<const observe::ClusterObjects>> read = view.Get();
    return read ? Status::Ok() : read.error();
  });
}

void BM_SchedulerAfterANewPod(benchmark::State& state) {
  HeldCluster cluster(static_cast<int>(state.range(0)));
  controller::SchedulerLoop loop(cluster.store(), cluster.cache(), cluster.clock());
  STRATA_CHECK(loop.RunOnce().ok());
  for (auto _ : state) {
    state.PauseTiming();
    cluster.AddPendingPod();
    state.ResumeTiming();
    // The cycle that places it, then the pass that reads the bind back.
    benchmark::DoNotOptimize(loop.RunOnce());
    benchmark::DoNotOptimize(loop.RunOnce());
  }
  state.counters["pods"] = static_cast<double>(state.range(0));
}

#define STRATA_PASS_BENCH(name) \
  BENCHMARK(name)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime()

STRATA_PASS_BENCH(BM_SchedulerLoop);
STRATA_PASS_BENCH(BM_JobController);
STRATA_PASS_BENCH(BM_NodeController);
STRATA_PASS_BENCH(BM_ServiceController);
STRATA_PASS_BENCH(BM_ClusterStateMetrics);
STRATA_PASS_BENCH(BM_GpuAndCostView);
STRATA_PASS_BENCH(BM_SchedulerAfterANewPod);

}  // namespace
}  // namespace strata

BENCHMARK_MAIN();
