#include "controller/service_replicas.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <map>

#include "api/encode.h"
#include "api/object.h"
#include "controller/training_pod.h"

namespace strata::controller {
namespace {

using api::kDrainingAnnotation;
using api::kEndpointAnnotation;
using api::kGroupSizeAnnotation;
using api::kReadyAtAnnotation;
using api::kServedModelAnnotation;
using api::kServiceVersionAnnotation;
using api::kTemplateHashAnnotation;

std::string AnnotationOr(const api::Pod& pod, const char* key) {
  const std::string* value = api::PodAnnotation(pod, key);
  return value == nullptr ? std::string() : *value;
}

const cluster::Stored<api::Pod>* Leader(const Replica& replica) {
  for (const auto& pod : replica.pods) {
    if (pod.value.spec.owner.rank == 0) return &pod;
  }
  return nullptr;
}

}  // namespace

bool Replica::Draining() const { return DrainStarted().has_value(); }

std::optional<TimePoint> Replica::DrainStarted() const {
  std::optional<TimePoint> earliest;
  for (const auto& pod : pods) {
    const std::string* mark = api::PodAnnotation(pod.value, kDrainingAnnotation);
    if (mark == nullptr) continue;
    TimePoint at = ParseRfc3339(*mark).value_or(TimePoint{});
    if (!earliest || at < *earliest) earliest = at;
  }
  return earliest;
}

bool Replica::Stopping() const {
  return std::any_of(pods.begin(), pods.end(),
                     [](const auto& pod) { return !api::StopRequested(pod.value).empty(); });
}

bool Replica::Broken() const {
  for (const auto& pod : pods) {
    if (api::StopRequested(pod.value).empty() && api::PodTerminal(pod.value)) return true;
  }
  return static_cast<int64_t>(pods.size()) < group_size &&
         std::any_of(pods.begin(), pods.end(),
                     [](const auto& pod) { return !pod.value.spec.node_name.empty(); });
}

bool Replica::Terminal() const {
  return std::all_of(pods.begin(), pods.end(),
                     [](const auto& pod) { return api::PodTerminal(pod.value); });
}

bool Replica::Ready() const { return Running() && ReadyAt().has_value(); }

bool Replica::Running() const {
  if (!Live() || static_cast<int64_t>(pods.size()) < group_size) return false;
  return std::all_of(pods.begin(), pods.end(), [](const auto& pod) {
    return pod.value.status.phase == api::PodPhase::kRunning;
  });
}

bool Replica::Live() const { return !Draining() && !Stopping() && !Broken() && !Terminal(); }

std::string Replica::Endpoint() const {
  const cluster::Stored<api::Pod>* leader = Leader(*this);
  return leader == nullptr ? std::string() : AnnotationOr(leader->value, kEndpointAnnotation);
}

std::optional<TimePoint> Replica::ReadyAt() const {
  const cluster::Stored<api::Pod>* leader = Leader(*this);
  if (leader == nullptr) return std::nullopt;
  const std::string* text = api::PodAnnotation(leader->value, kReadyAtAnnotation);
  return text == nullptr ? std::nullopt : ParseRfc3339(*text);
}

TimePoint Replica::Created() const {
  TimePoint earliest = TimePoint::max();
  for (const auto& pod : pods) earliest = std::min(earliest, pod.raw.creation_timestamp);
  return pods.empty() ? TimePoint{} : earliest;
}

std::vector<Replica> GroupReplicas(std::vector<cluster::Stored<api::Pod>> pods) {
  std::map<int64_t, Replica> by_index;
  for (cluster::Stored<api::Pod>& pod : pods) {
    Replica& replica = by_index[pod.value.spec.owner.replica];
    replica.index = pod.value.spec.owner.replica;
    if (replica.pods.empty()) {
      replica.version = AnnotationOr(pod.value, kServiceVersionAnnotation);
      replica.template_hash = AnnotationOr(pod.value, kTemplateHashAnnotation);
      std::string size = AnnotationOr(pod.value, kGroupSizeAnnotation);
      replica.group_size = size.empty() ? 1 : std::max<int64_t>(1, std::atoll(size.c_str()));
    }
    replica.pods.push_back(std::move(pod));
  }
  std::vector<Replica> out;
  out.reserve(by_index.size());
  for (auto& [index, replica] : by_index) {
    std::sort(replica.pods.begin(), replica.pods.end(), [](const auto& a, const auto& b) {
      return a.value.spec.owner.rank < b.value.spec.owner.rank;
    });
    out.push_back(std::move(replica));
  }
  return out;
}

std::string ServiceTemplateHash(const api::Service& service, const api::ServiceVersion& version) {
  nlohmann::json spec = api::EncodeObject(api::Object(service))["spec"];
  nlohmann::json shape = nlohmann::json::object();
  for (const char* key :
       {"resources", "gpuSelector", "tolerations", "tensorParallel", "nodesPerReplica", "queue",
        "priority", "leader", "topology", "ordinalNames"}) {
    if (spec.contains(key)) shape[key] = spec[key];
  }
  shape["engine"] = spec["engine"];
  for (const nlohmann::json& v : spec["versions"]) {
    if (v.value("name", "") == version.name && v.contains("engine")) shape["engine"] = v["engine"];
  }
  const std::string text = shape.dump();
  return fmt::format("{:016x}", XXH3_64bits(text.data(), text.size()));
}

std::string ReplicaPodName(const api::Service& service, const api::ServiceVersion& version,
                           int64_t index, int64_t rank) {
  if (service.spec.ordinal_names) {
    return service.spec.nodes_per_replica > 1
               ? fmt::format("{}-{}-{}", service.metadata.name, index, rank)
               : fmt::format("{}-{}", service.metadata.name, index);
  }
  if (service.spec.nodes_per_replica > 1) {
    return fmt::format("{}-{}-{}-{}", service.metadata.name, version.name, index, rank);
  }
  return fmt::format("{}-{}-{}", service.metadata.name, version.name, index);
}

std::vector<api::Pod> MakeReplicaPods(const api::Service& service,
                                      const api::ServiceVersion& version, int64_t index) {
  const api::ServiceSpec& spec = service.spec;
  const std::string hash = ServiceTemplateHash(service, version);
  std::vector<api::Pod> pods;
  for (int64_t rank = 0; rank < spec.nodes_per_replica; ++rank) {
    api::Pod pod;
    pod.metadata.name = ReplicaPodName(service, version, index, rank);
    pod.metadata.namespace_name = service.metadata.namespace_name;
    pod.metadata.labels = service.metadata.labels;
    pod.metadata.labels[api::kServiceNameLabel] = service.metadata.name;
    pod.metadata.labels[api::kServiceVersionLabel] = version.name;
    if (pod.metadata.labels.count(api::kLwsNameLabel) > 0) {
      pod.metadata.labels[api::kLwsGroupIndexLabel] = std::to_string(index);
      pod.metadata.labels[api::kLwsWorkerIndexLabel] = std::to_string(rank);
    }
    auto& annotations = pod.metadata.annotations;
    annotations[kServiceVersionAnnotation] = version.name;
    annotations[kTemplateHashAnnotation] = hash;
    annotations[kServedModelAnnotation] = spec.model;
    annotations[kGroupSizeAnnotation] = std::to_string(spec.nodes_per_replica);
    if (!spec.topology.level.empty()) {
      annotations[api::kTopologyLevelAnnotation] = spec.topology.level;
      annotations[api::kTopologyModeAnnotation] = spec.topology.mode;
    }
    pod.spec.owner =
        api::PodOwner{"Service", service.metadata.name, index, rank, service.metadata.uid};
    pod.spec.queue = spec.queue;
    pod.spec.priority = spec.priority;
    pod.spec.restart_policy = "Never";
    pod.spec.resources = spec.resources;
    pod.spec.gpu_selector = spec.gpu_selector;
    pod.spec.node_selector = spec.node_selector;
    pod.spec.tolerations = spec.tolerations;
    pod.spec.template_ = rank == 0 && spec.leader ? *spec.leader
                         : version.engine         ? *version.engine
                                                  : spec.engine;
    pods.push_back(std::move(pod));
  }
  return pods;
}

}  // namespace strata::controller
