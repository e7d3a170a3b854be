#include "engine/tokenizer.h"

#include <xxhash.h>

#include <array>

#include "common/check.h"

namespace strata::engine {
namespace {

bool IsWordByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool IsSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Calls emit(token_bytes) for each token of `text`.
template <typename Emit>
void ForEachToken(std::string_view text, Emit&& emit) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = text[i];
    if (IsSpace(c)) {
      ++i;
      continue;
    }
    size_t start = i++;
    if (IsWordByte(c)) {
      while (i < text.size() && IsWordByte(text[i])) ++i;
    }
    emit(text.substr(start, i - start));
  }
}

// Generated ids live above every hashed prompt id's range, so GeneratedTokenText can check them.
constexpr TokenId kGeneratedBase = 0x80000000u;

constexpr std::array<std::string_view, 64> kVocabulary = {
    " the",     " model",    " serves",  " tokens",    " quickly",   " and",      " a",
    " cluster", " of",       " GPUs",    " runs",      " many",      " requests", " with",
    " shared",  " prefixes", " cache",   " blocks",    " in",        " memory",   " while",
    " each",    " replica",  " answers", " questions", " about",     " training", " jobs",
    " that",    " scale",    " across",  " nodes",     " to",        " meet",     " their",
    " goals",   ".",         ",",        " is",        " it",        " for",      " on",
    " this",    " we",       " can",     " see",       " how",       " fast",     " latency",
    " grows",   " as",       " batch",   " size",      " increases", " so",       " keep",
    " queues",  " short",    " under",   " load",      " every",     " second",   " counts",
    " well"};

}  // namespace

std::vector<TokenId> Tokenize(std::string_view text) {
  std::vector<TokenId> ids;
  ids.reserve(text.size() / 4 + 1);
  ForEachToken(text, [&](std::string_view token) {
    ids.push_back(static_cast<TokenId>(XXH3_64bits(token.data(), token.size())) & ~kGeneratedBase);
  });
  return ids;
}

size_t CountTokens(std::string_view text) {
  size_t count = 0;
  ForEachToken(text, [&](std::string_view) { ++count; });
  return count;
}

uint64_t GenerationSeed(std::span<const TokenId> prompt) {
  return XXH3_64bits(prompt.data(), prompt.size_bytes());
}

TokenId GeneratedToken(uint64_t seed, size_t index) {
  uint64_t h = XXH3_64bits_withSeed(&index, sizeof(index), seed);
  return kGeneratedBase + static_cast<TokenId>(h % kVocabulary.size());
}

std::string_view GeneratedTokenText(TokenId id) {
  STRATA_CHECK(id >= kGeneratedBase && id - kGeneratedBase < kVocabulary.size());
  return kVocabulary[id - kGeneratedBase];
}

std::vector<uint64_t> ChainedBlockHashes(std::span<const TokenId> tokens, size_t block_size) {
  STRATA_CHECK(block_size > 0);
  std::vector<uint64_t> hashes;
  hashes.reserve(tokens.size() / block_size);
  uint64_t previous = 0;
  for (size_t offset = 0; offset + block_size <= tokens.size(); offset += block_size) {
    // Seeding with the previous hash keys each block by its whole prefix, as vLLM does.
    previous = XXH3_64bits_withSeed(tokens.data() + offset, block_size * sizeof(TokenId), previous);
    hashes.push_back(previous);
  }
  return hashes;
}

}  // namespace strata::engine
