#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "engine/kv_cache.h"
#include "engine/profile.h"
#include "engine/tokenizer.h"

namespace strata::engine {

struct EngineOptions {
  EngineProfile profile;
  int max_num_seqs = 256;
  // 0: the profile's values.
  int num_kv_blocks = 0;
  int block_size = 0;
  // Blocks of the host-memory KV tier (CPU offloading); 0: none.
  int cpu_offload_blocks = 0;
  // LoRA adapters loaded in this engine; a request may name one of them.
  std::vector<std::string> lora_adapters;
};

struct EngineRequest {
  uint64_t id = 0;  // unique among the engine's live requests; chosen by the caller
  std::vector<TokenId> prompt;
  int max_tokens = 16;  // the engine generates exactly this many tokens
  std::string adapter;  // empty: the base model
};

// One token a step produced.
struct TokenOutput {
  uint64_t request_id = 0;
  TokenId token = 0;
  int index = 0;  // 0 for the first generated token
  // From arrival (index 0: the time to first token) or from the previous token (inter-token
  // latency) to the end of the step.
  Duration latency{};
  bool finished = false;  // the last token: max_tokens reached
  Duration e2e{};         // arrival to the end of the step; set when finished
  int prompt_tokens = 0;  // set when finished, for usage
};

struct StepResult {
  Duration duration{};  // the step's outputs become visible at now + duration
  std::vector<TokenOutput> outputs;
};

// What the engine exposes to scrapers (vLLM's /metrics figures).
struct EngineStats {
  int64_t running = 0;
  int64_t waiting = 0;
  double kv_usage = 0;               // fraction of KV blocks in use
  int64_t prefix_cache_queries = 0;  // prompt tokens looked up in the prefix cache
  int64_t prefix_cache_hits = 0;     // of those, tokens found cached on the GPU
  int64_t host_cache_hits = 0;       // of those, tokens reloaded from the host-memory tier
  int64_t prompt_tokens = 0;
  int64_t generation_tokens = 0;
  int64_t preemptions = 0;
  std::vector<std::string> running_adapters;  // distinct, sorted
  std::vector<std::string> waiting_adapters;  // distinct, sorted
};

// The model of one LLM engine replica (vLLM's V1 scheduler, simplified): continuous batching of
// up to max_num_seqs sequences, chunked prefill, a KV cache of fixed blocks with prefix caching
// (and optionally a host-memory tier that evicted blocks go to and are reloaded from),
// preemption by recompute when decode runs out of blocks, and the latency of each step from an
// EngineProfile.
//
// Pure and deterministic: no threads, no clock. The caller owns time: it calls Step(now), and
// the step's outputs exist at now + duration; the next Step should start then. The same object
// runs in real time under `strata engine-sim` and in virtual time under `strata sim serve`.
//
// Owned by one loop; not thread-safe.
class EngineModel {
 public:
  // REQUIRES: options valid (see Validate).
  explicit EngineModel(EngineOptions options);

  // InvalidArgument naming the option when `options` cannot make an engine.
  static Status Validate(const EngineOptions& options);

  // Queues `request`, arriving at `now`. Errors, with nothing queued: InvalidArgument for an
  // empty prompt, max_tokens < 1, or prompt + max_tokens larger than the whole KV cache;
  // NotFound for an adapter not loaded; AlreadyExists for a live id.
  Status Add(EngineRequest request, TimePoint now);

  // Drops a queued or running request (its client went away), freeing its blocks. Returns
  // false when no such request is live.
  bool Abort(uint64_t request_id);

  // Whether a step would do anything (some request is queued or running).
  bool HasWork() const { return !waiting_.empty() || !running_.empty(); }

  // Runs one step starting at `now`: preempts if decode needs blocks that are not there,
  // admits queued requests that arrived by `now` first come first served while sequences,
  // blocks and the prefill budget allow, prefills, decodes one token per running sequence.
  // Finished requests leave. With nothing to do at `now`, returns a zero duration and no
  // outputs.
  StepResult Step(TimePoint now);

  EngineStats Stats() const;
  const EngineOptions& options() const { return options_; }
  int block_size() const { return block_size_; }
  int num_kv_blocks() const { return kv_.num_blocks(); }

 private:
  struct Sequence {
    EngineRequest request;
    std::vector<uint64_t> prompt_hashes;
    uint64_t seed = 0;
    TimePoint arrival{};
    TimePoint last_token{};
    int generated = 0;
    int computed = 0;  // tokens whose KV is in the cache
    bool admitted_before = false;
    std::vector<int> blocks;

    // Tokens to compute before the next token can be emitted.
    int Target() const { return static_cast<int>(request.prompt.size()) + generated; }
    // Past its prefill: the only token left to compute is the last one it generated.
    bool Decoding() const { return generated > 0 && computed + 1 == Target(); }
  };

  int BlocksFor(int tokens) const { return (tokens + block_size_ - 1) / block_size_; }
  // Gives each decoding sequence room for one more token, preempting the newest if needed.
  void ReserveDecodeBlocks();
  void Preempt(size_t running_index);
  // Takes KV blocks for a waiting sequence, reusing cached prefix blocks and reloading those in
  // the host tier (adding their tokens to *reloaded_tokens). Returns false, with nothing taken,
  // when the blocks are not there.
  bool TryAdmit(Sequence& sequence, int64_t* reloaded_tokens);
  void Finish(Sequence& sequence);

  EngineOptions options_;
  int block_size_;
  KvCache kv_;
  std::unordered_map<uint64_t, std::unique_ptr<Sequence>> sequences_;
  std::deque<Sequence*> waiting_;
  std::vector<Sequence*> running_;  // in admission order; the newest is preempted first
  EngineStats counters_;
};

}  // namespace strata::engine
