#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace strata::node {

// One MIG (Multi-Instance GPU) instance carved out of a physical GPU.
struct MigInstance {
  std::string uuid;  // "MIG-..." as NVML reports it
  std::string name;  // e.g. "NVIDIA H100 80GB HBM3 MIG 1g.10gb"
  int64_t memory_bytes = 0;
};

// One physical GPU as the node agent sees it. `index` is the value that goes into
// CUDA_VISIBLE_DEVICES. GPUs that share an `nvlink_island` reach each other over NVLink; a GPU
// without NVLink peers is alone in its island.
struct GpuDevice {
  int index = 0;
  std::string name;
  std::string uuid;
  int64_t memory_bytes = 0;
  bool mig_enabled = false;
  std::vector<MigInstance> mig_instances;
  int nvlink_island = 0;
};

// The GPUs of one node, with the node's place in the topology (rack) when known.
struct NodeGpus {
  std::string node_name;
  std::string rack;  // empty when unknown (a real host knows no rack by itself)
  std::vector<GpuDevice> gpus;
};

// Where a node agent learns which GPUs exist: NVML on a real host (NvmlInventory), or a
// simulated shape (SimulatedInventory). A seam named in DESIGN.md; implementations are
// thread-compatible (call from one thread, or synchronise externally).
class GpuInventory {
 public:
  virtual ~GpuInventory() = default;

  // Returns every node this inventory describes with its GPUs: one node for a real host,
  // several for a simulated cluster. On failure (library missing, driver error) returns a
  // Status whose message says what is missing; nothing is partially returned.
  virtual Result<std::vector<NodeGpus>> Discover() = 0;

  // A short description of the source for logs and `strata` output: "nvml (libnvidia-ml.so.1)",
  // "simulated 4x8:H100-80GB,racks=2".
  virtual std::string Describe() const = 0;
};

}  // namespace strata::node
