#include "node/nvml_inventory.h"

#include <fmt/format.h>

#include <numeric>

#include "node/nvml_library.h"
#include "node/simulated_inventory.h"

namespace strata::node {
namespace {

// Reads everything about one NVML device handle; the caller decides what it means.
class DeviceReader {
 public:
  explicit DeviceReader(const NvmlLibrary& api) : api_(api) {}

  Status Check(nvmlReturn_t rc, std::string_view call, unsigned index) const {
    if (rc == NVML_SUCCESS) return Status::Ok();
    return InternalError(
        fmt::format("NVML {} for GPU {} failed: {}", call, index, api_.error_string(rc)));
  }

  Result<MigInstance> ReadMig(nvmlDevice_t handle, unsigned parent) const {
    MigInstance mig;
    char buffer[kNameBufferSize] = {};
    RETURN_IF_ERROR(Check(api_.get_name(handle, buffer, sizeof buffer), "GetName(MIG)", parent));
    mig.name = buffer;
    char uuid[kUuidBufferSize] = {};
    RETURN_IF_ERROR(Check(api_.get_uuid(handle, uuid, sizeof uuid), "GetUUID(MIG)", parent));
    mig.uuid = uuid;
    nvmlMemory_t memory{};
    RETURN_IF_ERROR(Check(api_.get_memory_info(handle, &memory), "GetMemoryInfo(MIG)", parent));
    mig.memory_bytes = static_cast<int64_t>(memory.total);
    return mig;
  }

  Result<GpuDevice> ReadGpu(nvmlDevice_t handle, unsigned index) const {
    GpuDevice gpu;
    gpu.index = static_cast<int>(index);
    char name[kNameBufferSize] = {};
    RETURN_IF_ERROR(Check(api_.get_name(handle, name, sizeof name), "GetName", index));
    gpu.name = name;
    char uuid[kUuidBufferSize] = {};
    RETURN_IF_ERROR(Check(api_.get_uuid(handle, uuid, sizeof uuid), "GetUUID", index));
    gpu.uuid = uuid;
    nvmlMemory_t memory{};
    RETURN_IF_ERROR(Check(api_.get_memory_info(handle, &memory), "GetMemoryInfo", index));
    gpu.memory_bytes = static_cast<int64_t>(memory.total);

    unsigned current = 0;
    unsigned pending = 0;
    nvmlReturn_t rc = api_.get_mig_mode(handle, &current, &pending);
    if (rc == NVML_ERROR_NOT_SUPPORTED) return gpu;  // a GPU without MIG support
    RETURN_IF_ERROR(Check(rc, "GetMigMode", index));
    gpu.mig_enabled = current == NVML_DEVICE_MIG_ENABLE;
    if (!gpu.mig_enabled) return gpu;
    unsigned slots = 0;
    RETURN_IF_ERROR(
        Check(api_.get_max_mig_device_count(handle, &slots), "GetMaxMigDeviceCount", index));
    for (unsigned slot = 0; slot < slots; ++slot) {
      nvmlDevice_t mig_handle = nullptr;
      rc = api_.get_mig_device_handle_by_index(handle, slot, &mig_handle);
      if (rc == NVML_ERROR_NOT_FOUND) continue;  // an empty slot
      RETURN_IF_ERROR(Check(rc, "GetMigDeviceHandleByIndex", index));
      ASSIGN_OR_RETURN(MigInstance mig, ReadMig(mig_handle, index));
      gpu.mig_instances.push_back(std::move(mig));
    }
    return gpu;
  }

 private:
  const NvmlLibrary& api_;
};

// Groups GPUs into islands: connected components of the NVLink peer graph, numbered in order of
// their lowest GPU index.
void AssignNvlinkIslands(const NvmlLibrary& api, const std::vector<nvmlDevice_t>& handles,
                         std::vector<GpuDevice>* gpus) {
  std::vector<size_t> parent(handles.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (size_t i = 0; i < handles.size(); ++i) {
    for (size_t j = i + 1; j < handles.size(); ++j) {
      int status = -1;
      if (api.get_p2p_status(handles[i], handles[j], NVML_P2P_CAPS_INDEX_NVLINK, &status) ==
              NVML_SUCCESS &&
          status == NVML_P2P_STATUS_OK) {
        parent[root(j)] = root(i);
      }
    }
  }
  std::vector<int> island_of_root(handles.size(), -1);
  int next_island = 0;
  for (size_t i = 0; i < handles.size(); ++i) {
    int& island = island_of_root[root(i)];
    if (island < 0) island = next_island++;
    (*gpus)[i].nvlink_island = island;
  }
}

}  // namespace

NvmlInventory::NvmlInventory(std::string library_path, std::string node_name)
    : library_path_(std::move(library_path)), node_name_(std::move(node_name)) {}

Result<std::vector<NodeGpus>> NvmlInventory::Discover() {
  ASSIGN_OR_RETURN(std::unique_ptr<NvmlLibrary> nvml, NvmlLibrary::Open(library_path_));
  ASSIGN_OR_RETURN(NodeGpus node, DiscoverGpus(*nvml, node_name_));
  return std::vector<NodeGpus>{std::move(node)};
}

Result<NodeGpus> DiscoverGpus(const NvmlLibrary& api, const std::string& node_name) {
  unsigned count = 0;
  nvmlReturn_t count_rc = api.get_count(&count);
  if (count_rc != NVML_SUCCESS) {
    return Err(
        InternalError(fmt::format("nvmlDeviceGetCount failed: {}", api.error_string(count_rc))));
  }
  DeviceReader reader(api);
  NodeGpus node;
  node.node_name = node_name;
  std::vector<nvmlDevice_t> handles(count);
  for (unsigned i = 0; i < count; ++i) {
    RETURN_IF_ERROR(reader.Check(api.get_handle_by_index(i, &handles[i]), "GetHandleByIndex", i));
    ASSIGN_OR_RETURN(GpuDevice gpu, reader.ReadGpu(handles[i], i));
    node.gpus.push_back(std::move(gpu));
  }
  AssignNvlinkIslands(api, handles, &node.gpus);
  return node;
}

std::string NvmlInventory::Describe() const { return fmt::format("nvml ({})", library_path_); }

Result<LocalInventory> OpenLocalInventory(const std::string& library_path,
                                          const std::string& node_name,
                                          std::string_view simulate_spec) {
  ASSIGN_OR_RETURN(SimulateSpec spec, ParseSimulateSpec(simulate_spec));
  LocalInventory local;
  auto nvml = std::make_unique<NvmlInventory>(library_path, node_name);
  Result<std::vector<NodeGpus>> found = nvml->Discover();
  if (found && !found->empty() && !found->front().gpus.empty()) {
    local.notice = fmt::format("found {} GPU(s) through NVML", found->front().gpus.size());
    local.nodes = std::move(*found);
    local.inventory = std::move(nvml);
    return local;
  }
  std::string why = found ? "NVML reports no GPU" : found.error().message();
  local.inventory = std::make_unique<SimulatedInventory>(spec);
  local.notice = fmt::format("no NVIDIA GPU found ({}); using the {} inventory", why,
                             local.inventory->Describe());
  ASSIGN_OR_RETURN(local.nodes, local.inventory->Discover());
  return local;
}

}  // namespace strata::node
