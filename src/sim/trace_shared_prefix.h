#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/trace_readers.h"

namespace strata::sim {

// A token length in a workload: `mean` when std_dev is 0, otherwise drawn from a normal
// distribution (mean, std_dev), rounded and cut to [min, max] (inference-perf's
// *_distribution fields).
struct LengthDistribution {
  double mean = 1;
  double std_dev = 0;
  int min = 1;
  int max = 1;
};

// The shared-prefix workload of the Gateway API Inference Extension's prefix-cache benchmark
// (an inference-perf values file: config.data.shared_prefix and config.load.stages): num_groups
// system prompts of system_prompt_len tokens, each with num_prompts_per_group questions; each
// question's length and its answer's length are drawn once per prompt (question_len and
// output_len, or question_distribution and output_distribution). Arrivals are Poisson at each
// stage's rate for its duration. Without multi-turn chat every request picks one of the
// group x question prompts uniformly; with it (enable_multi_turn_chat) every prompt is a user
// session, the sessions take requests in turn (in a shuffled order), and a session's later
// rounds carry its earlier questions and answers after the system prompt.
struct SharedPrefixWorkload {
  int num_groups = 0;
  int prompts_per_group = 0;
  int system_prompt_len = 0;
  LengthDistribution question_len;
  LengthDistribution output_len;
  bool multi_turn_chat = false;
  struct Stage {
    double rate = 0;      // requests per second
    double duration = 0;  // seconds
  };
  std::vector<Stage> stages;
};

// Reads the workload from an inference-perf values file (YAML). A length is given as
// question_len / output_len (an integer), as question_distribution / output_distribution
// ({mean, std_dev, min, max}; std_dev defaults to 0, min to 1, max to 10,000,000), or both when
// they agree (the integer equals the mean). InvalidArgument naming the file and the field
// ("values.yaml: config.data.shared_prefix.num_groups: must be an integer >= 1"); NotFound when
// the file cannot be opened.
Result<SharedPrefixWorkload> ReadSharedPrefixWorkload(const std::string& path);

// The requests of `workload`, with every stage's rate multiplied by `rate_scale`, drawn with
// `seed` (deterministic). Prompts use 16-token blocks, so requests of one group share the
// system prompt's blocks; the system prompt, each question and each answer start a block of
// their own (their token counts are padded to whole blocks). Multi-turn rounds follow arrival
// order: a round does not wait for the previous round's answer.
std::vector<TraceRequest> GenerateSharedPrefixTrace(const SharedPrefixWorkload& workload,
                                                    double rate_scale, uint64_t seed);

}  // namespace strata::sim
