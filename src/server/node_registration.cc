#include "server/node_registration.h"

#include <fmt/format.h>
#include <unistd.h>

#include <map>

#include "api/encode.h"
#include "node/gpu_models.h"
#include "server/object_codec.h"

namespace strata::server {
namespace {

constexpr int kRegisterAttempts = 5;

// The spec's spelling of a GPU model ("H100-80GB") for a product name NVML reports.
std::string ModelName(const std::string& product_name) {
  for (const node::GpuModel& model : node::KnownGpuModels()) {
    if (model.product_name == product_name || model.name == product_name) {
      return std::string(model.name);
    }
  }
  return product_name;
}

// "1g.10gb" from "NVIDIA H100 80GB HBM3 MIG 1g.10gb".
std::string MigProfile(const std::string& name) {
  size_t space = name.rfind(' ');
  return space == std::string::npos ? name : name.substr(space + 1);
}

// GPU feature discovery's spelling of a product name: "NVIDIA H100 80GB HBM3" becomes
// "NVIDIA-H100-80GB-HBM3".
std::string ProductLabel(const std::string& product_name) {
  std::string label = product_name;
  for (char& c : label) {
    if (c == ' ') c = '-';
  }
  return label;
}

}  // namespace

NodeCapacity SimulatedNodeCapacity() {
  return {Quantity::FromUnits(224),
          Quantity::FromUnits(int64_t{2} << 40, Quantity::Format::kBinarySI)};
}

NodeCapacity HostCapacity() {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  return {Quantity::FromUnits(cpus > 0 ? cpus : 1),
          Quantity::FromUnits(pages > 0 && page_size > 0 ? int64_t{pages} * page_size : 0,
                              Quantity::Format::kBinarySI)};
}

std::vector<api::Node> NodesFromInventory(const std::vector<node::NodeGpus>& nodes,
                                          const NodeCapacity& capacity, bool simulated,
                                          TimePoint now) {
  std::vector<api::Node> out;
  for (const node::NodeGpus& found : nodes) {
    api::Node node;
    node.metadata.name = found.node_name;
    node.metadata.labels[api::kHostnameLabel] = found.node_name;
    if (!found.rack.empty()) node.metadata.labels[api::kRackLabel] = found.rack;
    if (simulated) node.metadata.labels[api::kSimulatedLabel] = "true";
    node.status.cpu = capacity.cpu;
    node.status.memory = capacity.memory;
    for (const node::GpuDevice& device : found.gpus) {
      api::NodeGpu gpu;
      gpu.index = device.index;
      gpu.uuid = device.uuid;
      gpu.model = ModelName(device.name);
      gpu.memory = Quantity::FromUnits(device.memory_bytes, Quantity::Format::kBinarySI);
      gpu.nvlink_island = device.nvlink_island;
      gpu.mig_enabled = device.mig_enabled;
      for (const node::MigInstance& instance : device.mig_instances) {
        gpu.mig_instances.push_back({MigProfile(instance.name), instance.uuid});
      }
      node.metadata.labels[api::kGpuModelLabel] = gpu.model;
      node.metadata.labels[api::kGpuProductLabel] = ProductLabel(device.name);
      node.status.gpus.push_back(std::move(gpu));
    }
    std::string stamp = FormatRfc3339(now);
    node.status.conditions.push_back(
        {"Ready", "True", "AgentReady", "the node agent is running", stamp, stamp});
    out.push_back(std::move(node));
  }
  return out;
}

Result<store::Write> RegistrationWrite(const store::Store& store, const api::Node& node) {
  ASSIGN_OR_RETURN(store::Object object, ToStoreObject(api::Object(node)));
  Result<store::Object> current = store.Get(object.key);
  if (!current) {
    if (current.error().code() != StatusCode::kNotFound) return Err(current.error());
    return store::Write{store::WriteOp::kCreate, std::move(object)};
  }
  if (current->body.contains("spec")) object.body["spec"] = current->body["spec"];
  object.resource_version = current->resource_version;
  return store::Write{store::WriteOp::kUpdate, std::move(object)};
}

Status CheckGpuUuidsUnclaimed(const store::Store& store, const api::Node& node) {
  // Where each UUID `node` reports sits in its manifest.
  std::map<std::string, std::string> claimed;
  for (size_t g = 0; g < node.status.gpus.size(); ++g) {
    const api::NodeGpu& gpu = node.status.gpus[g];
    if (!gpu.uuid.empty()) claimed.emplace(gpu.uuid, fmt::format("status.gpus[{}].uuid", g));
    for (size_t m = 0; m < gpu.mig_instances.size(); ++m) {
      if (gpu.mig_instances[m].uuid.empty()) continue;
      claimed.emplace(gpu.mig_instances[m].uuid,
                      fmt::format("status.gpus[{}].migInstances[{}].uuid", g, m));
    }
  }
  if (claimed.empty()) return Status::Ok();
  Result<store::ListResult> nodes = store.List({"Node", std::nullopt, {}});
  if (!nodes) return nodes.error();
  for (const store::Object& other : nodes->items) {
    if (other.key.name == node.metadata.name) continue;
    const nlohmann::json gpus =
        other.body.value(nlohmann::json::json_pointer("/status/gpus"), nlohmann::json::array());
    if (!gpus.is_array()) continue;
    std::vector<std::string> reported;
    for (const nlohmann::json& gpu : gpus) {
      if (!gpu.is_object()) continue;
      reported.push_back(gpu.value("uuid", ""));
      const nlohmann::json instances = gpu.value("migInstances", nlohmann::json::array());
      if (!instances.is_array()) continue;
      for (const nlohmann::json& instance : instances) {
        if (instance.is_object()) reported.push_back(instance.value("uuid", ""));
      }
    }
    for (const std::string& uuid : reported) {
      auto claim = claimed.find(uuid);
      if (uuid.empty() || claim == claimed.end()) continue;
      return AlreadyExistsError(fmt::format(
          "node \"{}\": {} \"{}\" is a GPU that node \"{}\" reports already; a GPU belongs to "
          "one node (if {} is gone, an admin deletes it first: strata delete node {})",
          node.metadata.name, claim->second, uuid, other.key.name, other.key.name, other.key.name));
    }
  }
  return Status::Ok();
}

Status RegisterNodes(store::Store& store, const std::vector<api::Node>& nodes) {
  for (const api::Node& node : nodes) {
    for (int attempt = 0;; ++attempt) {
      Result<store::Write> write = RegistrationWrite(store, node);
      if (!write) return write.error();
      Result<std::vector<store::Object>> written = store.Apply({std::move(*write)});
      if (written) break;
      StatusCode code = written.error().code();
      bool raced = code == StatusCode::kConflict || code == StatusCode::kAlreadyExists;
      if (!raced || attempt + 1 == kRegisterAttempts) return written.error();
    }
  }
  return Status::Ok();
}

Status HeartbeatNodes(store::Store& store, const std::vector<std::string>& names, TimePoint now) {
  std::string stamp = FormatRfc3339(now);
  for (const std::string& name : names) {
    for (int attempt = 0; attempt < kRegisterAttempts; ++attempt) {
      Result<store::Object> current = store.Get({"Node", "", name});
      if (!current) {
        if (current.error().code() == StatusCode::kNotFound) break;
        return current.error();
      }
      store::Object update = *current;
      nlohmann::json& conditions = update.body["status"]["conditions"];
      if (!conditions.is_array()) conditions = nlohmann::json::array();
      nlohmann::json* ready = nullptr;
      for (nlohmann::json& condition : conditions) {
        if (condition.value("type", "") == "Ready") ready = &condition;
      }
      if (ready == nullptr) {
        conditions.push_back({{"type", "Ready"}});
        ready = &conditions.back();
      }
      if (ready->value("status", "") != "True") (*ready)["lastTransitionTime"] = stamp;
      (*ready)["status"] = "True";
      (*ready)["reason"] = "AgentReady";
      (*ready)["message"] = "the node agent is running";
      (*ready)["lastHeartbeatTime"] = stamp;
      Result<store::Object> written = store.Update(std::move(update));
      if (written) break;
      if (written.error().code() != StatusCode::kConflict) return written.error();
    }
  }
  return Status::Ok();
}

}  // namespace strata::server
