#include "engine/engine_model.h"

#include <algorithm>
#include <set>

#include "common/check.h"

namespace strata::engine {
namespace {

EngineOptions WithProfileDefaults(EngineOptions options) {
  if (options.num_kv_blocks == 0) options.num_kv_blocks = options.profile.num_kv_blocks;
  if (options.block_size == 0) options.block_size = options.profile.block_size;
  return options;
}

std::vector<std::string> DistinctAdapters(const auto& sequences) {
  std::set<std::string> adapters;
  for (const auto* sequence : sequences) {
    if (!sequence->request.adapter.empty()) adapters.insert(sequence->request.adapter);
  }
  return {adapters.begin(), adapters.end()};
}

}  // namespace

EngineModel::EngineModel(EngineOptions options)
    : options_(WithProfileDefaults(std::move(options))),
      block_size_(options_.block_size),
      kv_(options_.num_kv_blocks, options_.cpu_offload_blocks) {
  STRATA_CHECK(Validate(options_).ok());
}

Status EngineModel::Validate(const EngineOptions& options) {
  EngineOptions resolved = WithProfileDefaults(options);
  if (resolved.max_num_seqs < 1) return InvalidArgumentError("max_num_seqs must be at least 1");
  if (resolved.num_kv_blocks < 1) return InvalidArgumentError("kv_blocks must be at least 1");
  if (resolved.block_size < 1) return InvalidArgumentError("block_size must be at least 1");
  if (resolved.cpu_offload_blocks < 0) {
    return InvalidArgumentError("cpu_offload_blocks must not be negative");
  }
  if (resolved.profile.max_prefill_tokens_per_step < 1) {
    return InvalidArgumentError("max_prefill_tokens_per_step must be at least 1");
  }
  for (const std::string& adapter : resolved.lora_adapters) {
    if (adapter.empty()) return InvalidArgumentError("lora adapter names must not be empty");
  }
  return Status::Ok();
}

Status EngineModel::Add(EngineRequest request, TimePoint now) {
  if (request.prompt.empty()) return InvalidArgumentError("prompt: must not be empty");
  if (request.max_tokens < 1) return InvalidArgumentError("max_tokens: must be at least 1");
  int64_t tokens = static_cast<int64_t>(request.prompt.size()) + request.max_tokens;
  int64_t capacity = static_cast<int64_t>(kv_.num_blocks()) * block_size_;
  if (tokens > capacity) {
    return InvalidArgumentError("prompt (" + std::to_string(request.prompt.size()) +
                                " tokens) plus max_tokens (" + std::to_string(request.max_tokens) +
                                ") exceeds the KV cache (" + std::to_string(capacity) + " tokens)");
  }
  if (!request.adapter.empty() &&
      std::find(options_.lora_adapters.begin(), options_.lora_adapters.end(), request.adapter) ==
          options_.lora_adapters.end()) {
    return NotFoundError("model: LoRA adapter \"" + request.adapter + "\" is not loaded");
  }
  if (sequences_.contains(request.id)) {
    return AlreadyExistsError("request " + std::to_string(request.id) + " is already live");
  }
  auto sequence = std::make_unique<Sequence>();
  sequence->prompt_hashes = ChainedBlockHashes(request.prompt, block_size_);
  sequence->seed = GenerationSeed(request.prompt);
  sequence->arrival = now;
  sequence->request = std::move(request);
  waiting_.push_back(sequence.get());
  uint64_t id = sequence->request.id;
  sequences_.emplace(id, std::move(sequence));
  return Status::Ok();
}

bool EngineModel::Abort(uint64_t request_id) {
  auto it = sequences_.find(request_id);
  if (it == sequences_.end()) return false;
  Sequence* sequence = it->second.get();
  kv_.Release(sequence->blocks);
  std::erase(waiting_, sequence);
  std::erase(running_, sequence);
  sequences_.erase(it);
  return true;
}

void EngineModel::Preempt(size_t running_index) {
  Sequence* victim = running_[running_index];
  kv_.Release(victim->blocks);
  victim->blocks.clear();
  victim->computed = 0;
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(running_index));
  // Recompute: it goes back to the head of the queue and prefills prompt + generated tokens.
  waiting_.push_front(victim);
  ++counters_.preemptions;
}

void EngineModel::ReserveDecodeBlocks() {
  for (size_t i = 0; i < running_.size();) {
    Sequence* sequence = running_[i];
    if (!sequence->Decoding() ||
        static_cast<int>(sequence->blocks.size()) >= BlocksFor(sequence->computed + 1)) {
      ++i;
      continue;
    }
    if (kv_.AppendBlock(sequence->blocks)) {
      ++i;
      continue;
    }
    // Out of blocks: the newest running sequence gives its blocks back (vLLM's recompute
    // preemption), possibly this one; then this one tries again.
    size_t victim = running_.size() - 1;
    Preempt(victim);
    if (victim == i) continue;  // this sequence itself was the newest: the loop moves on
  }
}

bool EngineModel::TryAdmit(Sequence& sequence, int64_t* reloaded_tokens) {
  int target = sequence.Target();
  std::span<const uint64_t> hashes = sequence.prompt_hashes;
  // At least one token is computed, so a fully cached prompt still produces its next token.
  const size_t reusable = static_cast<size_t>((target - 1) / block_size_);
  size_t matched = std::min(kv_.MatchLength(hashes), reusable);
  size_t reloaded = std::min(kv_.HostMatchLength(hashes, matched), reusable - matched);
  size_t needed = static_cast<size_t>(BlocksFor(target));
  if (!kv_.CanAllocate(hashes, matched, needed)) return false;
  sequence.blocks = kv_.Allocate(hashes, matched, needed);
  if (reloaded > 0) {
    // The reloaded blocks hold their prefix's KV as soon as the copy is done, in this step.
    kv_.TouchHost(hashes.subspan(matched, reloaded));
    kv_.Register(sequence.blocks, hashes.first(matched + reloaded));
  }
  sequence.computed = static_cast<int>(matched + reloaded) * block_size_;
  *reloaded_tokens += static_cast<int64_t>(reloaded) * block_size_;
  counters_.prefix_cache_queries += target;
  counters_.prefix_cache_hits += static_cast<int64_t>(matched) * block_size_;
  counters_.host_cache_hits += static_cast<int64_t>(reloaded) * block_size_;
  if (!sequence.admitted_before) counters_.prompt_tokens += sequence.request.prompt.size();
  sequence.admitted_before = true;
  return true;
}

void EngineModel::Finish(Sequence& sequence) {
  kv_.Release(sequence.blocks);
  std::erase(running_, &sequence);
  sequences_.erase(sequence.request.id);
}

StepResult EngineModel::Step(TimePoint now) {
  StepResult result;
  if (!HasWork()) return result;
  ReserveDecodeBlocks();

  std::vector<Sequence*> decoding;
  int64_t context_tokens = 0;
  int64_t budget = options_.profile.max_prefill_tokens_per_step;
  int64_t prefill_tokens = 0;
  int64_t reloaded_tokens = 0;
  std::vector<Sequence*> prefill_done;
  auto prefill = [&](Sequence* sequence) {
    int64_t chunk = std::min<int64_t>(sequence->Target() - sequence->computed, budget);
    sequence->computed += static_cast<int>(chunk);
    budget -= chunk;
    prefill_tokens += chunk;
    if (sequence->computed == sequence->Target()) prefill_done.push_back(sequence);
  };
  for (Sequence* sequence : running_) {
    if (sequence->Decoding()) {
      decoding.push_back(sequence);
    } else if (budget > 0) {
      prefill(sequence);  // a chunked prefill carried over from an earlier step
    }
  }
  while (!waiting_.empty() && budget > 0 &&
         static_cast<int>(running_.size()) < options_.max_num_seqs) {
    Sequence* sequence = waiting_.front();
    // A request that arrives after the step started joins the next step.
    if (sequence->arrival > now) break;
    if (!TryAdmit(*sequence, &reloaded_tokens))
      break;  // first come, first served: nobody overtakes the head
    waiting_.pop_front();
    running_.push_back(sequence);
    prefill(sequence);
  }
  for (Sequence* sequence : decoding) {
    sequence->computed += 1;
    context_tokens += sequence->computed;
  }

  result.duration = options_.profile.StepDuration(
      prefill_tokens, static_cast<int64_t>(decoding.size()), context_tokens, reloaded_tokens);
  TimePoint end = now + result.duration;

  auto emit = [&](Sequence* sequence) {
    TokenOutput output;
    output.request_id = sequence->request.id;
    output.index = sequence->generated;
    output.token = GeneratedToken(sequence->seed, static_cast<size_t>(sequence->generated));
    output.latency = end - (sequence->generated == 0 ? sequence->arrival : sequence->last_token);
    sequence->last_token = end;
    ++sequence->generated;
    ++counters_.generation_tokens;
    if (sequence->generated >= sequence->request.max_tokens) {
      output.finished = true;
      output.e2e = end - sequence->arrival;
      output.prompt_tokens = static_cast<int>(sequence->request.prompt.size());
      Finish(*sequence);
    }
    result.outputs.push_back(output);
  };
  for (Sequence* sequence : prefill_done) {
    // Its prompt blocks are computed now: later requests may share them.
    kv_.Register(sequence->blocks, sequence->prompt_hashes);
    emit(sequence);
  }
  for (Sequence* sequence : decoding) emit(sequence);
  return result;
}

EngineStats EngineModel::Stats() const {
  EngineStats stats = counters_;
  stats.running = static_cast<int64_t>(running_.size());
  stats.waiting = static_cast<int64_t>(waiting_.size());
  stats.kv_usage = kv_.Usage();
  stats.running_adapters = DistinctAdapters(running_);
  stats.waiting_adapters = DistinctAdapters(waiting_);
  return stats;
}

}  // namespace strata::engine
