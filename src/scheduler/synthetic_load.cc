#include "scheduler/synthetic_load.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "scheduler/scheduler.h"

namespace strata::scheduler {
namespace {

constexpr int kNodesPerRack = 32;
constexpr int kRacksPerBlock = 8;
constexpr int kQueues = 4;
// "pools": every kSmallPoolEvery-th node is of the small pool's kind.
constexpr int kSmallPoolEvery = 8;
constexpr const char* kSmallPoolModel = "A100-40GB";

}  // namespace

bool IsSyntheticShape(std::string_view shape) {
  return shape == "1gpu" || shape == "mixed" || shape == "gangs" || shape == "pools";
}

std::shared_ptr<Cluster> MakeSyntheticCluster(const SyntheticLoad& load) {
  auto cluster = std::make_shared<Cluster>();
  cluster->topology_levels = {"block", "rack"};
  for (int n = 0; n < load.nodes; ++n) {
    Node node;
    node.name = "node-" + std::to_string(n);
    const int rack = n / kNodesPerRack;
    node.labels = {{"block", "b" + std::to_string(rack / kRacksPerBlock)},
                   {"rack", "r" + std::to_string(rack)}};
    node.cpu_milli = 128'000;
    node.memory_bytes = int64_t{2} << 40;
    if (load.shape == "pools" && n % kSmallPoolEvery == kSmallPoolEvery - 1) {
      node.cpu_milli = 64'000;
      node.memory_bytes = int64_t{512} << 30;
      for (int g = 0; g < 4; ++g) node.gpus.push_back({kSmallPoolModel, 40 * 1024, g / 2, false});
      cluster->nodes.push_back(std::move(node));
      continue;
    }
    for (int g = 0; g < load.gpus_per_node; ++g) {
      node.gpus.push_back({"H100-80GB", 80 * 1024, g * 2 / std::max(1, load.gpus_per_node), false});
    }
    cluster->nodes.push_back(std::move(node));
  }
  if (load.shape == "gangs") {
    cluster->flavors.push_back({"h100", {}, std::nullopt});
    const int64_t per_queue = int64_t{load.nodes} * load.gpus_per_node * 1000 / kQueues;
    for (int q = 0; q < kQueues; ++q) {
      Queue queue;
      queue.name = "team-" + std::to_string(q);
      queue.cohort = "all";
      FlavorQuota quota;
      quota.flavor = 0;
      quota.resources[static_cast<int>(Resource::kGpu)] =
          ResourceQuota{per_queue, std::nullopt, std::nullopt};
      queue.flavors.push_back(quota);
      cluster->queues.push_back(std::move(queue));
    }
  }
  return cluster;
}

std::vector<Workload> MakeSyntheticWorkloads(const SyntheticLoad& load, TimePoint now) {
  std::mt19937_64 random(load.seed);
  std::vector<Workload> workloads;
  int pods = 0;
  while (pods < load.pods) {
    Workload w;
    w.name = "w-" + std::to_string(workloads.size());
    w.submitted = now - std::chrono::seconds(load.pods - pods);
    PodSet ps;
    ps.cpu_milli = 4000;
    ps.memory_bytes = int64_t{32} << 30;
    if (load.shape == "1gpu") {
      ps.gpu.count = 1;
    } else if (load.shape == "mixed" || load.shape == "pools") {
      const int roll = static_cast<int>(random() % 100);
      if (roll < 40) {
        ps.gpu.count = 1;
      } else if (roll < 60) {
        ps.gpu.milli = 500;
        ps.gpu.memory_mib = 20 * 1024;
      } else {
        ps.gpu.count = roll < 75 ? 2 : roll < 90 ? 4 : 8;
      }
      if (load.shape == "pools" && ps.gpu.count <= 4 && random() % 10 == 0) {
        ps.gpu.models = {kSmallPoolModel};
      }
    } else {
      static constexpr int kSizes[] = {8, 16, 32, 64, 128, 256};
      ps.count = std::min(kSizes[random() % 6], load.pods - pods);
      ps.gpu.count = load.gpus_per_node;
      w.queue = "team-" + std::to_string(workloads.size() % kQueues);
      w.topology = {TopologyMode::kPreferred, "rack"};
    }
    pods += ps.count;
    w.pod_sets.push_back(std::move(ps));
    workloads.push_back(std::move(w));
  }
  return workloads;
}

ThroughputResult MeasureThroughput(const SyntheticLoad& load) {
  const TimePoint now{std::chrono::seconds(1767225600)};
  Snapshot snapshot{MakeSyntheticCluster(load), {}, now};
  const std::vector<Workload> workloads = MakeSyntheticWorkloads(load, now);
  Scheduler scheduler(SchedulerOptions{load.seed});
  const auto start = std::chrono::steady_clock::now();
  const Decisions decisions = scheduler.Cycle(snapshot, workloads);
  ThroughputResult result;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.pods = load.pods;
  result.workloads = static_cast<int64_t>(workloads.size());
  result.pending = static_cast<int64_t>(decisions.pending.size());
  for (const Binding& b : decisions.bindings) result.placed += static_cast<int64_t>(b.pods.size());
  return result;
}

}  // namespace strata::scheduler
