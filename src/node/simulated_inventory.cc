#include "node/simulated_inventory.h"

#include <fmt/format.h>

#include <charconv>

#include "common/check.h"

namespace strata::node {
namespace {

std::string NamedGpuUuid(const std::string& node_name, int64_t index) {
  return fmt::format("GPU-{}-{:02d}", node_name, index);
}

constexpr int kMaxNodes = 100000;
constexpr int kMaxGpusPerNode = 64;

// Parses a positive decimal integer no larger than `max`; `what` names it in the error.
Result<int> ParseCount(std::string_view spec, std::string_view digits, std::string_view what,
                       int max) {
  int value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    return Err(InvalidArgumentError(
        fmt::format("\"{}\": {} \"{}\" is not a whole number", spec, what, digits)));
  }
  if (value < 1 || value > max) {
    return Err(InvalidArgumentError(
        fmt::format("\"{}\": {} must be between 1 and {}, got {}", spec, what, max, value)));
  }
  return value;
}

// Whether `name` can begin a node's name: a DNS-1123 label of lowercase letters, digits and
// '-', starting and ending with a letter or digit, short enough for the "-N" after it.
bool IsNodePrefix(std::string_view name) {
  auto alphanumeric = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (name.empty() || name.size() > 50 || !alphanumeric(name.front()) ||
      !alphanumeric(name.back())) {
    return false;
  }
  for (char c : name) {
    if (!alphanumeric(c) && c != '-') return false;
  }
  return true;
}

}  // namespace

Result<SimulateSpec> ParseSimulateSpec(std::string_view text) {
  const std::string_view format_hint =
      "expected NODESxGPUS:MODEL[,racks=R][,prefix=NAME], e.g. 4x8:H100-80GB";
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return Err(InvalidArgumentError(fmt::format("\"{}\": missing ':' ({})", text, format_hint)));
  }
  std::string_view shape = text.substr(0, colon);
  size_t x = shape.find('x');
  if (x == std::string_view::npos) {
    return Err(InvalidArgumentError(
        fmt::format("\"{}\": shape \"{}\" has no 'x' ({})", text, shape, format_hint)));
  }
  SimulateSpec spec;
  ASSIGN_OR_RETURN(spec.nodes, ParseCount(text, shape.substr(0, x), "node count", kMaxNodes));
  ASSIGN_OR_RETURN(spec.gpus_per_node,
                   ParseCount(text, shape.substr(x + 1), "GPUs per node", kMaxGpusPerNode));

  std::string_view rest = text.substr(colon + 1);
  size_t comma = rest.find(',');
  std::string_view model_name = rest.substr(0, comma);
  spec.model = FindGpuModel(model_name);
  if (spec.model == nullptr) {
    return Err(InvalidArgumentError(fmt::format("\"{}\": unknown GPU model \"{}\" (known: {})",
                                                text, model_name, KnownGpuModelNames())));
  }
  while (comma != std::string_view::npos) {
    rest = rest.substr(comma + 1);
    comma = rest.find(',');
    std::string_view option = rest.substr(0, comma);
    size_t eq = option.find('=');
    std::string_view key = option.substr(0, eq);
    if ((key != "racks" && key != "prefix") || eq == std::string_view::npos) {
      return Err(InvalidArgumentError(fmt::format(
          "\"{}\": unknown option \"{}\" (known: racks=R, prefix=NAME)", text, option)));
    }
    std::string_view value = option.substr(eq + 1);
    if (key == "racks") {
      ASSIGN_OR_RETURN(spec.racks, ParseCount(text, value, "racks", kMaxNodes));
    } else if (IsNodePrefix(value)) {
      spec.node_prefix = std::string(value);
    } else {
      return Err(InvalidArgumentError(fmt::format(
          "\"{}\": prefix \"{}\" is not a node name's start (lowercase letters, digits and "
          "'-', at most 50, starting and ending with a letter or digit)",
          text, value)));
    }
  }
  if (spec.racks > spec.nodes) {
    return Err(InvalidArgumentError(fmt::format("\"{}\": racks ({}) exceeds the node count ({})",
                                                text, spec.racks, spec.nodes)));
  }
  return spec;
}

std::string FormatSimulateSpec(const SimulateSpec& spec) {
  std::string text = fmt::format("{}x{}:{},racks={}", spec.nodes, spec.gpus_per_node,
                                 spec.model->name, spec.racks);
  if (spec.node_prefix != kDefaultNodePrefix) text += ",prefix=" + spec.node_prefix;
  return text;
}

SimulatedInventory::SimulatedInventory(SimulateSpec spec) : spec_(spec) {
  STRATA_CHECK(spec_.model != nullptr);
}

Result<std::vector<NodeGpus>> SimulatedInventory::Discover() {
  std::vector<NodeGpus> nodes;
  nodes.reserve(spec_.nodes);
  for (int n = 0; n < spec_.nodes; ++n) {
    NodeGpus node;
    node.node_name = fmt::format("{}-{}", spec_.node_prefix, n);
    // Contiguous blocks: with 4 nodes in 2 racks, nodes 0-1 are in rack-0 and 2-3 in rack-1.
    node.rack = fmt::format("rack-{}", static_cast<int64_t>(n) * spec_.racks / spec_.nodes);
    for (int g = 0; g < spec_.gpus_per_node; ++g) {
      GpuDevice gpu;
      gpu.index = g;
      gpu.name = std::string(spec_.model->product_name);
      gpu.uuid = spec_.node_prefix == kDefaultNodePrefix
                     ? fmt::format("GPU-sim-{:04d}-{:02d}", n, g)
                     : NamedGpuUuid(node.node_name, g);
      gpu.memory_bytes = spec_.model->memory_bytes;
      gpu.nvlink_island = g / spec_.model->nvlink_domain_size;
      node.gpus.push_back(std::move(gpu));
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

std::string SimulatedInventory::Describe() const {
  return "simulated " + FormatSimulateSpec(spec_);
}

void RenameSimulatedNode(NodeGpus& node, const std::string& name) {
  node.node_name = name;
  for (GpuDevice& gpu : node.gpus) gpu.uuid = NamedGpuUuid(name, gpu.index);
}

}  // namespace strata::node
