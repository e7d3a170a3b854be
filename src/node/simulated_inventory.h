#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "node/gpu_inventory.h"
#include "node/gpu_models.h"

namespace strata::node {

inline constexpr std::string_view kDefaultNodePrefix = "sim-node";

// The shape of a simulated cluster, parsed from
// `--simulate NODESxGPUS:MODEL[,racks=R][,prefix=NAME]`.
struct SimulateSpec {
  int nodes = 0;
  int gpus_per_node = 0;
  const GpuModel* model = nullptr;  // points into KnownGpuModels(); never null after parsing
  int racks = 1;
  // The nodes are PREFIX-0..PREFIX-(N-1): two simulated inventories on one cluster (two
  // control planes on one machine) need different ones.
  std::string node_prefix = std::string(kDefaultNodePrefix);
};

// The seed's shape: 4 nodes x 8 H100-80GB in 2 racks.
inline constexpr std::string_view kDefaultSimulateSpec = "4x8:H100-80GB,racks=2";

// Parses "4x8:H100-80GB,racks=2" (",prefix=plane-b" names the nodes plane-b-0..). Returns
// InvalidArgument naming the spec and the part that is wrong, e.g. `"4x8:H100-80GBX": unknown GPU
// model "H100-80GBX" (known: ...)`.
Result<SimulateSpec> ParseSimulateSpec(std::string_view text);

// The canonical spelling of a spec: ParseSimulateSpec(FormatSimulateSpec(s)) == s.
std::string FormatSimulateSpec(const SimulateSpec& spec);

// Names a simulated node `name` and gives its GPUs UUIDs of that name ("GPU-<name>-00"), as a
// spec with a prefix of its own does: simulated nodes that join one control plane under their
// own names never report the same GPU (the control plane refuses a node that does).
void RenameSimulatedNode(NodeGpus& node, const std::string& name);

// A GpuInventory with no hardware behind it: nodes "sim-node-0".."sim-node-(N-1)" (or the
// spec's prefix) spread over racks "rack-0".. in contiguous blocks, GPUs indexed 0..G-1 per
// node, NVLink islands after the model's domain size, UUIDs stable across runs and unique to
// the prefix. Immutable after construction;
// thread-safe.
class SimulatedInventory final : public GpuInventory {
 public:
  // REQUIRES: spec came from ParseSimulateSpec.
  explicit SimulatedInventory(SimulateSpec spec);

  // Never fails.
  Result<std::vector<NodeGpus>> Discover() override;
  std::string Describe() const override;

 private:
  SimulateSpec spec_;
};

}  // namespace strata::node
