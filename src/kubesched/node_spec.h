#pragma once

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "scheduler/model.h"

// A v1 Node as strata's scheduler sees it.

namespace strata::kubesched {

// GPU Feature Discovery's labels, read for each node's GPUs.
inline constexpr const char* kGpuProductLabel = "nvidia.com/gpu.product";
inline constexpr const char* kGpuMemoryLabel = "nvidia.com/gpu.memory";  // MiB
inline constexpr const char* kGpuResource = "nvidia.com/gpu";
// What strata's inventory agent (strata agent --inventory) writes on a GPU node: its GPUs as a
// JSON list in index order, each with "nvlinkIsland" and "migEnabled" (api's
// kNodeGpusAnnotation; this module reads JSON, not api's objects).
inline constexpr const char* kNodeGpusAnnotation = "strata.dev/gpus";
// A node's name, kept among its labels so that node affinity's matchFields (which select
// metadata.name only) match like matchExpressions.
inline constexpr const char* kNodeNameField = "metadata.name";

// The scheduler's node for a v1 Node: its labels, spec.taints, spec.unschedulable, allocatable
// cpu and memory, and one GPU per allocatable nvidia.com/gpu, of the model and memory its GPU
// Feature Discovery labels give, in the NVLink islands and MIG modes the inventory agent's
// kNodeGpusAnnotation gives when it lists as many GPUs (else all in one island, MIG off); its
// name is the label kNodeNameField.
// InvalidArgument naming the field when a quantity does not parse.
Result<scheduler::Node> NodeFromKube(const nlohmann::json& node);

}  // namespace strata::kubesched
