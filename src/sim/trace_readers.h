#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "engine/tokenizer.h"

// LLM request traces for `strata sim serve`: Mooncake's conversation trace and Azure's 2023
// inference trace, read into one shape.

namespace strata::sim {

// One request of a trace. Its prompt is a sequence of blocks of `block_tokens` deterministic
// tokens, one block per key; equal keys at equal positions mean a shared prefix (Mooncake's
// hash ids). The last block is cut to input_tokens.
struct TraceRequest {
  Duration arrival{};  // since the start of the trace
  int input_tokens = 0;
  int output_tokens = 0;
  int block_tokens = 512;
  std::vector<uint64_t> block_keys;
};

// The prompt token ids of `request`: block i holds the tokens hash(key i, j). Deterministic.
std::vector<engine::TokenId> ExpandPrompt(const TraceRequest& request);

// Chained hashes of the request's block keys: what a router that knows the blocks (not the
// text) uses as prefix hashes.
std::vector<uint64_t> ChainedKeyHashes(const TraceRequest& request);

// The fraction of all prompt blocks of `trace` that an infinite prefix cache would serve: a
// block is reusable when an earlier request had the same chain of keys up to it.
double IdealPrefixReuse(const std::vector<TraceRequest>& trace);

// Reads Mooncake's JSON-lines trace: {"timestamp": ms, "input_length", "output_length",
// "hash_ids": [...]} per line, each hash id one 512-token block. InvalidArgument naming the
// file and line ("trace.jsonl:12: output_length: must be an integer >= 1") on bad input;
// NotFound when the file cannot be opened.
Result<std::vector<TraceRequest>> ReadMooncakeTrace(const std::string& path);

// Reads Azure's 2023 trace CSV: a header, then "YYYY-MM-DD HH:MM:SS.fffffff,ContextTokens,
// GeneratedTokens" per line. Prompts share nothing (the trace has no content). Errors as
// ReadMooncakeTrace.
Result<std::vector<TraceRequest>> ReadAzureTrace(const std::string& path);

}  // namespace strata::sim
