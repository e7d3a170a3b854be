#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// Deterministic stand-ins for a model's tokenizer, so that the engine simulator counts and
// caches tokens the same way on every run and every machine.
//
// A token is a maximal run of ASCII letters and digits, or any other single non-space byte;
// whitespace separates tokens and is not a token. "Hello, world!" is 4 tokens. English text
// comes out at about one token per 4-5 bytes, close to a BPE tokenizer's count. A token's id is
// a hash of its bytes, so equal texts give equal ids and a shared prompt prefix gives a shared
// id prefix (which is what the prefix cache keys on).

namespace strata::engine {

using TokenId = uint32_t;

// The token ids of `text`.
std::vector<TokenId> Tokenize(std::string_view text);

// The number of tokens in `text` (== Tokenize(text).size(), without building the vector).
size_t CountTokens(std::string_view text);

// The seed of a request's generated text: a hash of its prompt ids, computed once per request.
uint64_t GenerationSeed(std::span<const TokenId> prompt);

// The `index`-th generated token of the request with `seed`: a deterministic function of the
// two, drawn from a small English vocabulary.
TokenId GeneratedToken(uint64_t seed, size_t index);

// The text of a generated token: a space and a word (" the", " model"). REQUIRES: `id` came from
// GeneratedToken.
std::string_view GeneratedTokenText(TokenId id);

// Chained hashes of the complete `block_size`-token blocks of `tokens`: hash i covers tokens
// [0, (i+1)*block_size), so one hash stands for the whole prefix. A trailing partial block is
// not hashed. REQUIRES: block_size > 0.
std::vector<uint64_t> ChainedBlockHashes(std::span<const TokenId> tokens, size_t block_size);

}  // namespace strata::engine
