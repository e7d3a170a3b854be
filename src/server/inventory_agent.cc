#include "server/inventory_agent.h"

#include <utility>

#include "kube/resource.h"
#include "node/nvml_inventory.h"
#include "observe/gpu_metrics.h"
#include "server/inventory_metadata.h"
#include "server/node_registration.h"

namespace strata::server {
namespace {

using json = nlohmann::json;

// The DCGM families of RenderGpuMetrics: the per-GPU series, not strata's cluster roll-ups.
const metrics::FamilySelection& DcgmFamilies() {
  static const metrics::FamilySelection kFamilies = [] {
    std::set<std::string, std::less<>> names;
    for (const std::string& family : observe::GpuMetricFamilies()) {
      if (family.starts_with("DCGM_")) names.insert(family);
    }
    return metrics::FamilySelection(std::move(names));
  }();
  return kFamilies;
}

}  // namespace

InventoryAgent::InventoryAgent(kube::Client& client, InventoryAgentOptions options)
    : client_(client), options_(std::move(options)) {}

InventoryAgent::~InventoryAgent() = default;

Status InventoryAgent::RunOnce() {
  if (!monitor_) {
    Result<std::unique_ptr<node::NvmlGpuMonitor>> opened =
        node::NvmlGpuMonitor::Open(options_.nvml_library);
    if (!opened) return opened.error();
    monitor_ = std::move(*opened);
  }
  // The inventory and the readings through the one NVML session the monitor keeps.
  Result<node::NodeGpus> found = node::DiscoverGpus(monitor_->library(), options_.node_name);
  if (!found) {
    monitor_.reset();  // opened again next pass
    return found.error();
  }
  Result<observe::GpuReadingsByUuid> readings = monitor_->Read();
  if (!readings) {
    monitor_.reset();
    return readings.error();
  }
  node::NodeGpus& gpus = *found;
  std::vector<observe::GpuSample> samples;
  for (const node::GpuDevice& device : gpus.gpus) {
    observe::GpuSample sample;
    sample.hostname = options_.node_name;
    sample.gpu = device.index;
    sample.uuid = device.uuid;
    sample.model_name = device.name;
    auto reading = readings->find(device.uuid);
    if (reading != readings->end()) sample.reading = reading->second;
    samples.push_back(std::move(sample));
  }
  std::string text;
  observe::RenderGpuMetrics(samples, text, DcgmFamilies());
  {
    std::lock_guard lock(mutex_);
    metrics_ = std::move(text);
  }
  // Only the Node's GPUs and labels are written: its CPU and memory are the kubelet's.
  api::Node node =
      NodesFromInventory({gpus}, NodeCapacity{}, /*simulated=*/false, RealClock::Instance().Now())
          .front();
  json metadata = InventoryMetadata(node, *readings);
  Result<json> patched = client_.Patch(kube::resources::kNodes, "", options_.node_name,
                                       kube::PatchType::kMerge, {{"metadata", metadata}});
  if (!patched) return patched.error();
  written_ = std::move(metadata);
  return Status::Ok();
}

std::string InventoryAgent::Metrics() const {
  std::lock_guard lock(mutex_);
  return metrics_;
}

std::vector<json> InventoryAgentRules() {
  return {{{"apiGroups", {""}}, {"resources", {"nodes"}}, {"verbs", {"patch"}}}};
}

}  // namespace strata::server
