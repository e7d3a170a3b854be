#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/trace_readers.h"

namespace strata::sim {

// The shared-prefix workload of the Gateway API Inference Extension's prefix-cache benchmark
// (an inference-perf values file: config.data.shared_prefix and config.load.stages): num_groups
// system prompts of system_prompt_len tokens, each with num_prompts_per_group questions of
// question_len tokens; every request picks one of the group x question prompts uniformly and
// asks for output_len tokens; arrivals are Poisson at each stage's rate for its duration.
struct SharedPrefixWorkload {
  int num_groups = 0;
  int prompts_per_group = 0;
  int system_prompt_len = 0;
  int question_len = 0;
  int output_len = 0;
  struct Stage {
    double rate = 0;      // requests per second
    double duration = 0;  // seconds
  };
  std::vector<Stage> stages;
};

// Reads the workload from an inference-perf values file (YAML). InvalidArgument naming the
// file and the field ("values.yaml: config.data.shared_prefix.num_groups: must be an integer
// >= 1"); NotFound when the file cannot be opened.
Result<SharedPrefixWorkload> ReadSharedPrefixWorkload(const std::string& path);

// The requests of `workload`, with every stage's rate multiplied by `rate_scale`, drawn with
// `seed` (deterministic). Prompts use 16-token blocks, so requests of one group share the
// system prompt's blocks.
std::vector<TraceRequest> GenerateSharedPrefixTrace(const SharedPrefixWorkload& workload,
                                                    double rate_scale, uint64_t seed);

}  // namespace strata::sim
