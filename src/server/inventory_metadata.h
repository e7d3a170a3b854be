#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "api/node.h"
#include "observe/cluster_gpus.h"

namespace strata::server {

// One GPU's health as the inventory agent judges it from NVML's readings.
struct GpuHealth {
  bool healthy = true;
  std::string reason;  // "Xid 79", "2 uncorrected ECC errors"; empty when healthy
};

// Unhealthy when the last Xid is one after which NVIDIA's guidance is to drain the GPU (48
// double-bit ECC, 63/64 row remapping, 74 NVLink, 79 fallen off the bus, 92 high single-bit
// rate, 94/95 contained and uncontained ECC, 119/120 GSP), or when volatile uncorrected ECC
// errors were counted. A figure NVML cannot read counts as healthy.
GpuHealth JudgeGpuHealth(const observe::GpuReading& reading);

// What `strata agent --inventory` writes on its Node (`node`, as NodesFromInventory made it from
// NVML; `readings` by UUID): {"labels": ..., "annotations": ...}, a merge patch of the Node's
// metadata and nothing else.
//   labels       GPU Feature Discovery's nvidia.com/gpu.present, .product, .memory (MiB of the
//                first GPU), .count; strata.dev/gpu-model; strata.dev/nvlink-islands,
//                strata.dev/mig-enabled and strata.dev/unhealthy-gpus
//   annotations  strata.dev/gpus (the GPUs as a strata Node's status lists them: index, UUID,
//                model, memory, NVLink island, MIG instances; the Kubernetes store reads them as
//                the node's GPUs) and strata.dev/gpu-health (JudgeGpuHealth per GPU)
// Pure; thread-safe.
nlohmann::json InventoryMetadata(const api::Node& node, const observe::GpuReadingsByUuid& readings);

}  // namespace strata::server
