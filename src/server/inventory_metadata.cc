#include "server/inventory_metadata.h"

#include <cmath>
#include <set>

#include "api/annotations.h"
#include "api/encode.h"
#include "api/object.h"

namespace strata::server {
namespace {

using json = nlohmann::json;

bool TakesTheGpuOutOfService(int xid) {
  static const std::set<int> kXids = {48, 63, 64, 74, 79, 92, 94, 95, 119, 120};
  return kXids.count(xid) > 0;
}

}  // namespace

GpuHealth JudgeGpuHealth(const observe::GpuReading& reading) {
  if (!std::isnan(reading.last_xid) &&
      TakesTheGpuOutOfService(static_cast<int>(reading.last_xid))) {
    return {false, "Xid " + std::to_string(static_cast<int>(reading.last_xid))};
  }
  if (!std::isnan(reading.ecc_dbe_volatile) && reading.ecc_dbe_volatile > 0) {
    const auto errors = static_cast<int64_t>(reading.ecc_dbe_volatile);
    return {false, std::to_string(errors) + " uncorrected ECC error" + (errors == 1 ? "" : "s")};
  }
  return {};
}

json InventoryMetadata(const api::Node& node, const observe::GpuReadingsByUuid& readings) {
  json labels = json::object();
  json annotations = json::object();
  const std::vector<api::NodeGpu>& gpus = node.status.gpus;
  for (const char* label : {api::kGpuProductLabel, api::kGpuModelLabel}) {
    auto found = node.metadata.labels.find(label);
    if (found != node.metadata.labels.end()) labels[label] = found->second;
  }
  labels[api::kGpuPresentLabel] = gpus.empty() ? "false" : "true";
  labels[api::kGpuCountLabel] = std::to_string(gpus.size());
  if (!gpus.empty()) {
    labels[api::kGpuMemoryLabel] = std::to_string(gpus.front().memory.Units() >> 20);
  }
  std::set<int64_t> islands;
  bool mig = false;
  int64_t unhealthy = 0;
  json health = json::array();
  for (const api::NodeGpu& gpu : gpus) {
    islands.insert(gpu.nvlink_island);
    mig = mig || gpu.mig_enabled;
    auto reading = readings.find(gpu.uuid);
    GpuHealth judged = reading == readings.end() ? GpuHealth{} : JudgeGpuHealth(reading->second);
    if (!judged.healthy) ++unhealthy;
    json entry = {{"uuid", gpu.uuid}, {"healthy", judged.healthy}};
    if (!judged.reason.empty()) entry["reason"] = judged.reason;
    health.push_back(std::move(entry));
  }
  labels[api::kNvlinkIslandsLabel] = std::to_string(islands.size());
  labels[api::kMigEnabledLabel] = mig ? "true" : "false";
  labels[api::kUnhealthyGpusLabel] = std::to_string(unhealthy);
  const json encoded = api::EncodeObject(api::Object(node));
  const json* status = encoded.contains("status") ? &encoded["status"] : nullptr;
  annotations[api::kNodeGpusAnnotation] =
      status != nullptr && status->is_object() && status->contains("gpus")
          ? (*status)["gpus"].dump()
          : "[]";
  annotations[api::kGpuHealthAnnotation] = health.dump();
  return {{"labels", std::move(labels)}, {"annotations", std::move(annotations)}};
}

}  // namespace strata::server
