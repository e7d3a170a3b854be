#include "sim/sim_picker_options.h"

#include <algorithm>
#include <cstdint>

namespace strata::sim {

gateway::PickerOptions SimPickerOptions(const engine::EngineModel& engine, int block_tokens) {
  gateway::PickerOptions options;
  const int64_t kv_tokens =
      static_cast<int64_t>(engine.num_kv_blocks() + engine.options().cpu_offload_blocks) *
      engine.block_size();
  options.prefix_blocks_per_endpoint =
      static_cast<size_t>(std::max<int64_t>(1, kv_tokens / std::max(block_tokens, 1)));
  options.prefill_seconds_per_block =
      ToSeconds(engine.options().profile.per_prompt_token) * block_tokens;
  options.prefill_overhead_seconds = ToSeconds(engine.options().profile.prefill_overhead);
  return options;
}

}  // namespace strata::sim
