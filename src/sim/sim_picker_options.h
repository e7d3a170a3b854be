#pragma once

#include "engine/engine_model.h"
#include "gateway/picker.h"

namespace strata::sim {

// The picker options of a simulated gateway in front of replicas that run `engine`, routing a
// trace whose prompts come in blocks of `block_tokens` tokens: the prefix index remembers about
// as many blocks per replica as the engine's KV cache holds, host tier included, and a block's
// prefill is priced at the engine profile's per-token cost and a prefilling step's overhead at its
// prefill_overhead. The policy and the rest keep
// PickerOptions' defaults.
gateway::PickerOptions SimPickerOptions(const engine::EngineModel& engine, int block_tokens);

}  // namespace strata::sim
