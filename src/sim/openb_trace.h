#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::sim {

// Readers for the Alibaba GPU cluster trace 2023 ("openb", alibaba/clusterdata
// cluster-trace-gpu-v2023) as published by the FGD artifact: a node list and a pod list, both
// CSV with a header row. Columns are found by name in the header, so their order does not
// matter and extra columns are ignored. Pure functions; thread-safe.

// One machine of the node list (`sn,cpu_milli,memory_mib,gpu,model`).
struct OpenbNode {
  std::string name;  // sn
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t gpu_count = 0;  // gpu
  std::string gpu_model;  // model; may be empty on a CPU-only node
};

// One pod of a pod list (`name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,...`).
struct OpenbPod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t gpu_count = 0;  // num_gpu
  // gpu_milli, per GPU, clipped to 0..1000 as the trace's replay does; 0 when gpu_count is 0.
  int32_t gpu_milli_each = 0;
  // gpu_spec split on '|', empty pieces dropped; empty means any model. Only kept when
  // gpu_count > 0 (a CPU-only pod has no GPU model constraint). The column is optional.
  std::vector<std::string> allowed_gpu_models;
};

// Parses a node list. `source` names the input in errors ("nodes.csv:3: column 'gpu' ...").
// Returns InvalidArgument naming the source, line and column on a missing column, a row with the
// wrong number of fields, a value that is not a non-negative integer, or a quoted field.
Result<std::vector<OpenbNode>> ParseOpenbNodes(std::string_view csv, std::string_view source);

// Parses a pod list; errors as ParseOpenbNodes.
Result<std::vector<OpenbPod>> ParseOpenbPods(std::string_view csv, std::string_view source);

// Reads and parses the file at `path`. NotFound when it cannot be read.
Result<std::vector<OpenbNode>> ReadOpenbNodes(const std::string& path);
Result<std::vector<OpenbPod>> ReadOpenbPods(const std::string& path);

}  // namespace strata::sim
