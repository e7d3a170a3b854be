#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace strata::engine {

// vLLM's default --gpu-memory-utilization: the share of the GPU's memory one engine plans for.
// A profile's num_kv_blocks is the KV cache at this figure.
inline constexpr double kDefaultGpuMemoryUtilization = 0.9;

// The --gpu-memory-utilization of an engine given `gpu_share` of a GPU's memory: vLLM's default
// of that share, so that a whole GPU gets vLLM's own default and engines sharing a GPU each keep
// the same headroom in their part.
inline double GpuMemoryUtilizationForShare(double gpu_share) {
  return kDefaultGpuMemoryUtilization * gpu_share;
}

// The latency model of one model on one accelerator, and the KV-cache size that goes with it.
// Plain data.
//
// One engine step runs every scheduled prefill chunk and one decode token for every sequence
// past its prefill (vLLM's continuous batching with chunked prefill). Its duration is
//
//   prefill part: prefill_overhead + per_prompt_token * (uncached prompt tokens computed)
//   decode part:  per_output_token * (1 + batch_slope * (decoding sequences - 1))
//                 + per_context_token * (tokens in the KV cache of the decoding sequences)
//   reload part:  per_reloaded_token * (prompt tokens whose KV is copied back from host memory)
//
// each part counted only when the step has work of that kind. At batch 1 with a short context
// this gives TTFT = overhead + P * per_prompt_token and one output token per per_output_token.
struct EngineProfile {
  std::string name;
  Duration prefill_overhead{};
  Duration per_prompt_token{};
  Duration per_output_token{};  // decode step at batch 1
  // Relative growth of a decode step per extra sequence in the batch.
  double batch_slope = 0;
  // Extra decode-step time per token of context held by the decoding sequences (attention reads
  // the whole KV cache of every sequence once per step).
  Duration per_context_token{};
  // KV-cache defaults: blocks of `block_size` tokens, at kDefaultGpuMemoryUtilization.
  int num_kv_blocks = 0;
  int block_size = 16;
  // The most prompt tokens one step prefills (vLLM's max_num_batched_tokens).
  int max_prefill_tokens_per_step = 8192;
  // Bytes of KV cache per token (sizes a host-memory tier given in bytes).
  int64_t kv_bytes_per_token = 0;
  // Copying one token's KV from host memory back to the GPU (a CPU offload tier, LMCache-style).
  Duration per_reloaded_token{};
  // The accelerator's memory (what NVML reports as its total).
  int64_t gpu_memory_bytes = 0;

  // The duration of a step that prefills `prefill_tokens` tokens, decodes one token for each
  // of `decoding_sequences` sequences holding `context_tokens` tokens in all, and reloads
  // `reloaded_tokens` tokens of KV from host memory.
  Duration StepDuration(int64_t prefill_tokens, int64_t decoding_sequences, int64_t context_tokens,
                        int64_t reloaded_tokens = 0) const;

  // The KV blocks of `block_size` tokens (0: the profile's) that `gib` GiB of host memory hold.
  // REQUIRES: gib >= 0.
  int HostBlocksIn(double gib, int block_size = 0) const;

  // The KV blocks of `block_size` tokens (0: the profile's) an engine gets when it may use
  // `utilization` of the GPU's memory (vLLM's --gpu-memory-utilization): what the weights,
  // activations and runtime take is fixed (the profile's memory at 0.9 less its KV cache), the
  // rest holds KV blocks, so two engines sharing a GPU each get their part. InvalidArgument when
  // `utilization` is not in (0, 1] or leaves no room for one block ("... the model needs 20.9
  // GiB ...", vLLM's "No available memory for the cache blocks").
  Result<int> GpuBlocksAt(double utilization, int block_size = 0) const;
};

// The profiles strata knows: "8b-h100" (an 8B model in BF16 on one H100-80GB).
//
// 8b-h100 follows public figures for Llama-3.1-8B on H100 with vLLM: 30 ms prefill overhead,
// 250 us per prompt token, 12 ms per output token at batch 1. Batch slope 0.01 per extra
// sequence: decode is bound by reading the 16 GB of weights once per step, which does not grow
// with the batch, so a batch of 64 costs ~1.6x one sequence (vLLM's published ITL at batch 64 is
// 1.5-2x batch 1). Context cost 40 ns per token: the KV cache of an 8B model is 128 KiB per
// token (32 layers x 8 KV heads x 128 dims x 2 x BF16), read once per step at ~3.3 TB/s.
// 26,000 blocks of 16 tokens (416k tokens) is what vLLM reports for this model at
// gpu_memory_utilization 0.9 on an 80 GB card ((80 GB x 0.9 - 16 GB of weights - activations)
// / 128 KiB per token). Reloading offloaded KV from host memory: 3 us per token, i.e. 128 KiB
// per token over PCIe Gen5 x16 at ~45 GB/s, the pinned host-to-device copy rate measured on
// H100 hosts (64 GB/s nominal): ~80x cheaper than prefilling the token again. The GPU's memory
// is an H100-80GB's as NVML reports it (81,559 MiB), so the weights, activations and CUDA
// graphs take 20.9 GiB and an engine with half the card (utilization 0.45) keeps 7,649 blocks.
Result<EngineProfile> ProfileByName(std::string_view name);

// The names ProfileByName accepts.
std::vector<std::string> ProfileNames();

}  // namespace strata::engine
