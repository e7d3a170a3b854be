#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "node/gpu_inventory.h"
#include "node/nvml_library.h"

namespace strata::node {

// The library NVML ships as; found through the dynamic loader's usual search.
inline constexpr char kNvmlLibrary[] = "libnvidia-ml.so.1";

// GpuInventory backed by NVML, loaded with dlopen at each Discover() so that strata builds and
// runs without NVIDIA's headers or driver. Reports each GPU's name, UUID, memory, MIG mode and
// MIG instances, and NVLink islands (GPUs joined by NVLink peer-to-peer, as
// nvmlDeviceGetP2PStatus(NVLINK) says, grouped transitively). Owned by the node agent;
// thread-compatible.
class NvmlInventory final : public GpuInventory {
 public:
  // `library_path`: a file name for the loader's search or a path (tests point it at a fake
  // NVML library). `node_name`: the name reported for this host.
  NvmlInventory(std::string library_path, std::string node_name);

  // Returns one node with every GPU NVML enumerates. Unavailable when the library cannot be
  // loaded, lacks a symbol, or nvmlInit fails (the message carries the loader's or NVML's
  // words); Internal when a device query fails. The library is unloaded before returning.
  Result<std::vector<NodeGpus>> Discover() override;
  std::string Describe() const override;

 private:
  std::string library_path_;
  std::string node_name_;
};

// Every GPU that `api` (opened) enumerates, as one node named `node_name`: what
// NvmlInventory::Discover reads, on a library the caller keeps open.
Result<NodeGpus> DiscoverGpus(const NvmlLibrary& api, const std::string& node_name);

// The inventory a node agent uses on this host, with the line it should print.
struct LocalInventory {
  std::unique_ptr<GpuInventory> inventory;
  std::vector<NodeGpus> nodes;  // what inventory->Discover() returned
  std::string notice;           // "found 8 GPU(s) through NVML" or why the simulation is used
};

// Tries NVML at `library_path`; when it is absent, fails, or finds no GPU, falls back to the
// simulated inventory described by `simulate_spec` (see ParseSimulateSpec) and says so in
// `notice`. Returns InvalidArgument only for a malformed `simulate_spec`.
Result<LocalInventory> OpenLocalInventory(const std::string& library_path,
                                          const std::string& node_name,
                                          std::string_view simulate_spec);

}  // namespace strata::node
