#include "kubesched/node_spec.h"

#include <string>

#include "common/quantity.h"
#include "kubesched/pod_spec.h"

namespace strata::kubesched {
namespace {

Result<scheduler::TaintEffect> TaintEffectFrom(const std::string& effect) {
  if (effect == "NoSchedule") return scheduler::TaintEffect::kNoSchedule;
  if (effect == "PreferNoSchedule") return scheduler::TaintEffect::kPreferNoSchedule;
  if (effect == "NoExecute") return scheduler::TaintEffect::kNoExecute;
  return tl::unexpected(Status(StatusCode::kInvalidArgument, "unknown effect \"" + effect + "\""));
}

}  // namespace

Result<scheduler::Node> NodeFromKube(const nlohmann::json& object) {
  scheduler::Node node;
  const nlohmann::json& metadata = object.value("metadata", nlohmann::json::object());
  node.name = metadata.value("name", "");
  if (const auto labels = metadata.find("labels");
      labels != metadata.end() && labels->is_object()) {
    for (const auto& [key, value] : labels->items())
      if (value.is_string()) node.labels.emplace(key, value.get<std::string>());
  }
  node.labels[kNodeNameField] = node.name;
  const nlohmann::json& spec = object.value("spec", nlohmann::json::object());
  node.unschedulable = spec.value("unschedulable", false);
  if (const auto taints = spec.find("taints"); taints != spec.end() && taints->is_array()) {
    for (size_t i = 0; i < taints->size(); ++i) {
      const nlohmann::json& taint = (*taints)[i];
      Result<scheduler::TaintEffect> effect = TaintEffectFrom(taint.value("effect", ""));
      if (!effect) {
        return tl::unexpected(effect.error().WithPrefix("node " + node.name + ": spec.taints[" +
                                                        std::to_string(i) + "].effect"));
      }
      node.taints.push_back({taint.value("key", ""), taint.value("value", ""), *effect});
    }
  }
  const nlohmann::json& status = object.value("status", nlohmann::json::object());
  const nlohmann::json& allocatable = status.value("allocatable", nlohmann::json::object());
  ASSIGN_OR_RETURN(ResourceList resources,
                   ReadResourceList(allocatable, "node " + node.name + ": status.allocatable"));
  node.cpu_milli = resources.cpu_milli;
  node.memory_bytes = resources.memory_bytes;
  scheduler::Gpu gpu;
  if (auto product = node.labels.find(kGpuProductLabel); product != node.labels.end())
    gpu.model = product->second;
  if (auto memory = node.labels.find(kGpuMemoryLabel); memory != node.labels.end()) {
    Result<Quantity> mib = Quantity::Parse(memory->second);
    if (mib) gpu.memory_mib = mib->Units();
  }
  node.gpus.assign(static_cast<size_t>(resources.gpus), gpu);
  const nlohmann::json& annotations = metadata.value("annotations", nlohmann::json::object());
  const nlohmann::json recorded =
      annotations.is_object() &&
              annotations.value(kNodeGpusAnnotation, nlohmann::json()).is_string()
          ? nlohmann::json::parse(annotations[kNodeGpusAnnotation].get<std::string>(), nullptr,
                                  /*allow_exceptions=*/false)
          : nlohmann::json();
  // A list of another length describes other devices than the ones allocatable (a MIG
  // strategy that advertises instances): the islands cannot be matched to them.
  if (recorded.is_array() && recorded.size() == node.gpus.size()) {
    for (size_t i = 0; i < node.gpus.size(); ++i) {
      const nlohmann::json& listed = recorded[i];
      if (!listed.is_object()) continue;
      const nlohmann::json& island = listed.value("nvlinkIsland", nlohmann::json());
      if (island.is_number_integer()) node.gpus[i].island = island.get<int>();
      node.gpus[i].mig_enabled = listed.value("migEnabled", nlohmann::json()) == true;
    }
  }
  return node;
}

}  // namespace strata::kubesched
