#include "observe/cluster_gpus.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <charconv>
#include <tuple>

#include "api/manifest.h"

namespace strata::observe {

namespace {

// Adds `body` to `nodes` or `pods` when it decodes to a Node or a Pod; counts it in
// `undecodable` else.
void AddDecoded(const nlohmann::json& body, SharedChunks<api::Node>::Chunk& nodes,
                SharedChunks<StoredPod>::Chunk& pods, int& undecodable) {
  Result<api::Object> decoded = api::DecodeObject(body);
  if (const api::Node* node = decoded ? decoded->As<api::Node>() : nullptr) {
    nodes.push_back(std::make_shared<const api::Node>(*node));
  } else if (const api::Pod* pod = decoded ? decoded->As<api::Pod>() : nullptr) {
    TimePoint when = ParseRfc3339(pod->metadata.creation_timestamp).value_or(TimePoint{});
    pods.push_back(std::make_shared<const StoredPod>(StoredPod{*pod, when}));
  } else {
    ++undecodable;
  }
}

}  // namespace

ClusterObjects DecodeClusterObjects(const std::vector<nlohmann::json>& nodes,
                                    const std::vector<nlohmann::json>& pods) {
  ClusterObjects cluster;
  SharedChunks<api::Node>::Chunk decoded_nodes;
  SharedChunks<StoredPod>::Chunk decoded_pods;
  for (const nlohmann::json& node : nodes) {
    AddDecoded(node, decoded_nodes, decoded_pods, cluster.undecodable);
  }
  for (const nlohmann::json& pod : pods) {
    AddDecoded(pod, decoded_nodes, decoded_pods, cluster.undecodable);
  }
  cluster.nodes = SharedChunks<api::Node>(std::move(decoded_nodes));
  cluster.pods = SharedChunks<StoredPod>(std::move(decoded_pods));
  return cluster;
}

std::string FormatGpuActivity(double share) {
  return fmt::format("{:.2f}", std::clamp(share, 0.0, 1.0));
}

std::optional<double> ParseGpuActivity(std::string_view text) {
  double share = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), share);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
      !(share >= 0 && share <= 1)) {
    return std::nullopt;
  }
  return share;
}

bool HasSimulatedGpus(const api::Node& node) {
  auto label = node.metadata.labels.find(api::kSimulatedLabel);
  return label != node.metadata.labels.end() && label->second == "true";
}

bool HoldsResources(const api::Pod& pod) {
  return !pod.spec.node_name.empty() && pod.status.phase != api::PodPhase::kSucceeded &&
         pod.status.phase != api::PodPhase::kFailed;
}

std::string QueueLabelOf(const api::Pod& pod, const api::QueueNames& queues) {
  return queues.Resolve(pod.metadata.namespace_name, pod.spec.queue).value_or(pod.spec.queue);
}

GpuHolder HolderOf(const api::Pod& pod, const api::AssignedGpu& gpu,
                   const api::QueueNames& queues) {
  GpuHolder holder;
  holder.pod = pod.metadata.name;
  holder.namespace_name = pod.metadata.namespace_name;
  if (pod.spec.owner.kind == "Job") holder.job = pod.spec.owner.name;
  if (pod.spec.owner.kind == "Service") holder.service = pod.spec.owner.name;
  holder.queue = QueueLabelOf(pod, queues);
  auto team = pod.metadata.labels.find(api::kTeamLabel);
  if (team != pod.metadata.labels.end()) holder.team = team->second;
  holder.share = static_cast<double>(gpu.share.milli()) / 1000.0;
  holder.memory_bytes = gpu.memory.milli() / 1000;
  holder.running = pod.status.phase == api::PodPhase::kRunning;
  auto activity = pod.metadata.annotations.find(api::kGpuActivityAnnotation);
  if (activity != pod.metadata.annotations.end()) {
    holder.activity = ParseGpuActivity(activity->second);
  }
  return holder;
}

std::vector<GpuSample> ClusterGpuSamples(const ClusterObjects& cluster,
                                         const GpuReadingsByUuid& measured) {
  std::map<std::tuple<std::string, int64_t>, std::vector<GpuHolder>> holders;
  for (const std::shared_ptr<const StoredPod>& stored : cluster.pods) {
    if (!HoldsResources(stored->pod)) continue;
    for (const api::AssignedGpu& gpu : stored->pod.spec.assigned_gpus) {
      holders[{stored->pod.spec.node_name, gpu.index}].push_back(
          HolderOf(stored->pod, gpu, cluster.queues->names));
    }
  }
  std::vector<GpuSample> samples;
  for (const std::shared_ptr<const api::Node>& shared : cluster.nodes) {
    const api::Node& node = *shared;
    bool simulated = HasSimulatedGpus(node);
    for (const api::NodeGpu& gpu : node.status.gpus) {
      GpuSample sample;
      sample.hostname = node.metadata.name;
      sample.gpu = gpu.index;
      sample.uuid = gpu.uuid;
      sample.model_name = gpu.model;
      sample.simulated = simulated;
      auto held = holders.find({node.metadata.name, gpu.index});
      if (held != holders.end()) sample.holders = std::move(held->second);
      if (simulated) {
        sample.reading = SimulatedGpuReading(gpu.model, gpu.memory.milli() / 1000, sample.holders);
      } else if (auto found = measured.find(gpu.uuid); found != measured.end()) {
        sample.reading = found->second;
      }
      samples.push_back(std::move(sample));
    }
  }
  return samples;
}

}  // namespace strata::observe
