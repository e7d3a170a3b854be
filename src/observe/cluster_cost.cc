#include "observe/cluster_cost.h"

#include <memory>

#include "observe/cluster_objects_cache.h"

namespace strata::observe {
namespace {

std::optional<TimePoint> AnnotationTime(const api::Pod& pod, const char* annotation) {
  auto it = pod.metadata.annotations.find(annotation);
  if (it == pod.metadata.annotations.end()) return std::nullopt;
  return ParseRfc3339(it->second);
}

constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;

}  // namespace

std::vector<CostPod> CostPodsOf(const ClusterObjects& cluster) {
  std::map<std::string, const api::Node*> nodes;
  for (const std::shared_ptr<const api::Node>& node : cluster.nodes) {
    nodes[node->metadata.name] = node.get();
  }
  std::vector<CostPod> out;
  for (const std::shared_ptr<const StoredPod>& stored : cluster.pods) {
    const api::Pod& pod = stored->pod;
    if (pod.spec.node_name.empty()) continue;
    CostPod cost;
    cost.uid = pod.metadata.uid;
    cost.name = pod.metadata.name;
    cost.namespace_name = pod.metadata.namespace_name;
    cost.labels = pod.metadata.labels;
    cost.queue = QueueLabelOf(pod, cluster.queues->names);
    if (pod.spec.owner.kind == "Job") cost.job = pod.spec.owner.name;
    if (pod.spec.owner.kind == "Service") cost.service = pod.spec.owner.name;
    cost.cpu_cores = static_cast<double>(pod.spec.resources.cpu.milli()) / 1000.0;
    cost.memory_gib =
        static_cast<double>(pod.spec.resources.memory.milli()) / 1000.0 / kBytesPerGib;
    auto node = nodes.find(pod.spec.node_name);
    for (const api::AssignedGpu& gpu : pod.spec.assigned_gpus) {
      cost.gpus += static_cast<double>(gpu.share.milli()) / 1000.0;
      if (node == nodes.end()) continue;
      for (const api::NodeGpu& node_gpu : node->second->status.gpus) {
        if (node_gpu.index == gpu.index) cost.gpu_model = node_gpu.model;
      }
    }
    cost.start =
        AnnotationTime(pod, api::kBoundAtAnnotation)
            .value_or(AnnotationTime(pod, api::kStartedAtAnnotation).value_or(stored->created));
    if (!HoldsResources(pod)) {
      cost.end = AnnotationTime(pod, api::kFinishedAtAnnotation);
      if (!cost.end) continue;
    }
    out.push_back(std::move(cost));
  }
  return out;
}

void PriceAll(const PriceTable& prices, std::vector<CostPod>& pods) {
  for (CostPod& pod : pods) pod.prices = PricesFor(prices, pod.gpus > 0 ? pod.gpu_model : "");
}

void AddClusterMetrics(metrics::Registry& registry, std::shared_ptr<ClusterObjectsCache> cache,
                       ClusterMetricsOptions options) {
  auto shared = std::make_shared<const ClusterMetricsOptions>(std::move(options));
  std::vector<std::string> gpu_families = GpuMetricFamilies();
  std::vector<std::string> cost_families = CostMetricFamilies();
  std::vector<std::string> families = gpu_families;
  families.insert(families.end(), cost_families.begin(), cost_families.end());
  registry.AddCollector(
      std::move(families), [cache, shared, gpu_families, cost_families](
                               const metrics::FamilySelection& wanted, std::string& out) {
        Result<std::shared_ptr<const ClusterObjects>> cluster = cache->Get();
        if (!cluster) return;
        if (wanted.IncludesAnyOf(gpu_families)) {
          GpuReadingsByUuid measured =
              shared->measured_gpus ? shared->measured_gpus() : GpuReadingsByUuid{};
          RenderGpuMetrics(ClusterGpuSamples(**cluster, measured), out, wanted);
        }
        if (!wanted.IncludesAnyOf(cost_families)) return;
        TimePoint now = shared->clock->Now();
        std::map<std::string, double> tokens =
            shared->service_tokens ? shared->service_tokens() : std::map<std::string, double>{};
        const TimePoint window_start = now - shared->cost_window;
        std::vector<CostPod> pods;
        if (shared->ledger != nullptr) {
          Result<std::vector<CostPod>> read = shared->ledger->Read(window_start, now);
          if (!read) return;
          pods = std::move(*read);
        } else {
          pods = CostPodsOf(**cluster);
          PriceAll(shared->prices, pods);
        }
        std::vector<CostReport> reports;
        for (CostDimension dimension :
             {CostDimension::kTeam, CostDimension::kProject, CostDimension::kQueue,
              CostDimension::kJob, CostDimension::kService}) {
          reports.push_back(
              ComputeCost(shared->prices.currency, pods, dimension, window_start, now, tokens));
        }
        RenderCostMetrics(reports, out, wanted);
      });
}

}  // namespace strata::observe
