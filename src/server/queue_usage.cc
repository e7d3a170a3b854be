#include "server/queue_usage.h"

#include <algorithm>

namespace strata::server {
namespace {

using Json = nlohmann::json;

Quantity QuantityOf(const Json& value) {
  if (value.is_number_integer()) return Quantity::FromUnits(value.get<int64_t>());
  if (value.is_number()) {
    return Quantity::FromMilli(static_cast<int64_t>(value.get<double>() * 1000.0));
  }
  if (!value.is_string()) return Quantity();
  Result<Quantity> parsed = Quantity::Parse(value.get<std::string>());
  return parsed ? *parsed : Quantity();
}

std::string StringAt(const Json& object, const char* pointer) {
  Json::json_pointer path{pointer};
  if (!object.contains(path) || !object.at(path).is_string()) return "";
  return object.at(path).get<std::string>();
}

bool HoldsResources(const Json& pod) {
  std::string phase = StringAt(pod, "/status/phase");
  return !StringAt(pod, "/spec/nodeName").empty() && phase != "Succeeded" && phase != "Failed";
}

}  // namespace

api::QueueNames QueueNamesOf(const std::vector<Json>& queues) {
  api::QueueNames names;
  for (const Json& queue : queues) {
    std::string name = StringAt(queue, "/metadata/name");
    names.AddQueue(name);
    const Json& locals =
        queue.contains("spec") ? queue["spec"].value("localQueues", Json::array()) : Json::array();
    for (const Json& local : locals) {
      if (local.is_object()) {
        names.AddLocalQueue(local.value("namespace", ""), local.value("name", ""), name);
      }
    }
  }
  return names;
}

std::vector<QueueUsage> ComputeQueueUsage(const std::vector<Json>& queues,
                                          const std::vector<Json>& pods) {
  std::vector<QueueUsage> usage;
  std::map<std::string, size_t> index_of;
  for (const Json& queue : queues) {
    QueueUsage entry;
    entry.name = StringAt(queue, "/metadata/name");
    entry.cohort = StringAt(queue, "/spec/cohort");
    const Json& flavors =
        queue.contains("spec") ? queue["spec"].value("flavors", Json::array()) : Json::array();
    for (const Json& flavor : flavors) {
      if (!flavor.is_object()) continue;
      for (const Json& resource : flavor.value("resources", Json::array())) {
        std::string name = resource.is_object() ? resource.value("name", "") : "";
        if (name.empty()) continue;
        entry.resources[name].nominal += QuantityOf(resource.value("nominal", Json()));
      }
    }
    index_of[entry.name] = usage.size();
    usage.push_back(std::move(entry));
  }
  const api::QueueNames names = QueueNamesOf(queues);
  for (const Json& pod : pods) {
    if (!HoldsResources(pod)) continue;
    const std::optional<std::string> queue =
        names.Resolve(StringAt(pod, "/metadata/namespace"), StringAt(pod, "/spec/queue"));
    auto index = queue ? index_of.find(*queue) : index_of.end();
    if (index == index_of.end()) continue;
    Json::json_pointer requests_path{"/spec/resources"};
    if (!pod.contains(requests_path) || !pod.at(requests_path).is_object()) continue;
    for (const auto& [name, value] : pod.at(requests_path).items()) {
      if (name == "migProfile") continue;
      usage[index->second].resources[name].used += QuantityOf(value);
    }
  }
  for (QueueUsage& queue : usage) {
    for (auto& [name, resource] : queue.resources) {
      resource.borrowed = std::max(Quantity(), resource.used - resource.nominal);
    }
  }
  return usage;
}

}  // namespace strata::server
