#include "kubecompat/inference_pool_routes.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "api/served_model_name.h"
#include "api/source_form.h"
#include "common/json_member.h"

namespace strata::kubecompat {
namespace {

using json = nlohmann::json;

std::string MetadataString(const json& object, std::string_view field) {
  return StringMemberOr(MemberOrNull(object, "metadata"), field);
}

std::string Describe(std::string_view kind, const json& object) {
  return std::string(kind) + " " + MetadataString(object, "namespace") + "/" +
         MetadataString(object, "name");
}

std::vector<std::string> Strings(const json& list) {
  std::vector<std::string> out;
  if (!list.is_array()) return out;
  for (const json& item : list) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

const kube::GroupVersionResource kInferencePools{"inference.networking.k8s.io", "v1",
                                                 "inferencepools"};
const kube::GroupVersionResource kInferenceObjectives{"inference.networking.x-k8s.io", "v1alpha2",
                                                      "inferenceobjectives"};

std::vector<json> InferencePoolRules() {
  std::vector<json> rules;
  for (const kube::GroupVersionResource* resource : {&kInferencePools, &kInferenceObjectives}) {
    rules.push_back({{"apiGroups", {resource->group}},
                     {"resources", {resource->resource}},
                     {"verbs", {"get", "list", "watch"}}});
  }
  return rules;
}

std::string InferencePool::LabelSelector() const {
  std::string selector;
  for (const auto& [key, value] : match_labels) {
    if (!selector.empty()) selector += ",";
    selector += key + "=" + value;
  }
  return selector;
}

Result<InferencePool> ReadInferencePool(const json& object) {
  InferencePool pool;
  pool.namespace_name = MetadataString(object, "namespace");
  pool.name = MetadataString(object, "name");
  const json& spec = MemberOrNull(object, "spec");
  const json& labels = MemberOrNull(MemberOrNull(spec, "selector"), "matchLabels");
  if (labels.is_object()) {
    for (const auto& [key, value] : labels.items()) {
      if (value.is_string()) pool.match_labels[key] = value.get<std::string>();
    }
  }
  if (pool.match_labels.empty()) {
    return Err(InvalidArgumentError(Describe("InferencePool", object) +
                                    ": spec.selector.matchLabels: must name at least one label"));
  }
  const json& ports = MemberOrNull(spec, "targetPorts");
  if (!ports.is_array() || ports.size() != 1) {
    return Err(InvalidArgumentError(Describe("InferencePool", object) +
                                    ": spec.targetPorts: the API allows exactly one port"));
  }
  pool.target_port = IntegerMemberOr(ports[0], "number", 0);
  if (pool.target_port < 1 || pool.target_port > 65535) {
    return Err(InvalidArgumentError(Describe("InferencePool", object) +
                                    ": spec.targetPorts[0].number: must be 1 to 65535"));
  }
  return pool;
}

Result<InferenceObjective> ReadInferenceObjective(const json& object) {
  InferenceObjective objective;
  objective.namespace_name = MetadataString(object, "namespace");
  objective.name = MetadataString(object, "name");
  const json& spec = MemberOrNull(object, "spec");
  objective.priority = IntegerMemberOr(spec, "priority", 0);
  const json& ref = MemberOrNull(spec, "poolRef");
  const std::string group = StringMemberOr(ref, "group", kInferencePools.group);
  const std::string kind = StringMemberOr(ref, "kind", "InferencePool");
  if (group != kInferencePools.group || kind != "InferencePool") {
    return Err(InvalidArgumentError(Describe("InferenceObjective", object) +
                                    ": spec.poolRef: references " + kind + " of " + group +
                                    ", not an InferencePool of " + kInferencePools.group));
  }
  objective.pool_name = StringMemberOr(ref, "name");
  if (objective.pool_name.empty()) {
    return Err(InvalidArgumentError(Describe("InferenceObjective", object) +
                                    ": spec.poolRef.name: required"));
  }
  return objective;
}

std::string PoolEndpoint(const json& pod, int64_t port) {
  if (!MemberOrNull(MemberOrNull(pod, "metadata"), "deletionTimestamp").is_null()) return "";
  const json& status = MemberOrNull(pod, "status");
  const std::string ip = StringMemberOr(status, "podIP");
  if (ip.empty() || StringMemberOr(status, "phase") != "Running" ||
      api::TrueConditionOf(pod, "Ready") == nullptr) {
    return "";
  }
  const std::string host = ip.find(':') != std::string::npos ? "[" + ip + "]" : ip;
  return host + ":" + std::to_string(port);
}

std::vector<std::string> PodModelNames(const json& pod) {
  const json& containers = MemberOrNull(MemberOrNull(pod, "spec"), "containers");
  if (!containers.is_array()) return {};
  for (const json& container : containers) {
    api::ProcessTemplate engine;
    engine.command = Strings(MemberOrNull(container, "command"));
    engine.args = Strings(MemberOrNull(container, "args"));
    std::vector<std::string> names = api::VllmServedModelNames(engine);
    if (!names.empty()) return names;
  }
  return {};
}

std::vector<gateway::ModelConfig> RoutesFromPools(const std::vector<PoolMembers>& pools,
                                                  const std::vector<InferenceObjective>& objectives,
                                                  std::vector<std::string>* conflicts) {
  std::vector<const PoolMembers*> ordered;
  for (const PoolMembers& members : pools) ordered.push_back(&members);
  std::sort(ordered.begin(), ordered.end(), [](const PoolMembers* a, const PoolMembers* b) {
    return std::tie(a->pool.namespace_name, a->pool.name) <
           std::tie(b->pool.namespace_name, b->pool.name);
  });
  std::map<std::string, gateway::ModelConfig> models;
  for (const PoolMembers* members : ordered) {
    const InferencePool& pool = members->pool;
    // Model name -> the endpoints serving it, in pod order, each once.
    std::map<std::string, std::vector<std::string>> served;
    for (const json& pod : members->pods) {
      std::vector<std::string> names = PodModelNames(pod);
      if (names.empty()) names.push_back(pool.name);
      const std::string endpoint = PoolEndpoint(pod, pool.target_port);
      for (const std::string& name : names) {
        std::vector<std::string>& endpoints = served[name];
        if (!endpoint.empty() &&
            std::find(endpoints.begin(), endpoints.end(), endpoint) == endpoints.end()) {
          endpoints.push_back(endpoint);
        }
      }
    }
    if (served.empty()) served[pool.name];
    for (auto& [name, endpoints] : served) {
      if (models.contains(name)) {
        if (conflicts != nullptr) conflicts->push_back(name);
        continue;
      }
      gateway::ModelConfig model;
      model.name = name;
      gateway::VersionConfig version;
      version.name = pool.name;
      version.endpoints = std::move(endpoints);
      model.versions.push_back(std::move(version));
      for (const InferenceObjective& objective : objectives) {
        if (objective.namespace_name == pool.namespace_name && objective.pool_name == pool.name) {
          model.objectives[objective.name] = gateway::PriorityClassOfObjective(objective.priority);
        }
      }
      models.emplace(name, std::move(model));
    }
  }
  std::vector<gateway::ModelConfig> out;
  for (auto& [name, model] : models) out.push_back(std::move(model));
  return out;
}

}  // namespace strata::kubecompat
