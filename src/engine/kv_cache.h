#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace strata::engine {

// The KV cache of one engine: a fixed pool of blocks of `block_size` tokens, with a prefix
// cache (vLLM's automatic prefix caching). A complete prompt block, once computed, is
// registered under its chained hash (see ChainedBlockHashes); a later sequence whose prompt
// starts with the same blocks shares them instead of computing them again. A block whose last
// user finished stays cached while free; free blocks are reused least recently freed first,
// which evicts the oldest cached prefixes first.
//
// Optionally a host-memory tier (CPU offloading, LMCache-style): a cached block evicted from
// the GPU keeps its hash in a larger LRU of `host_blocks` blocks, from which a later sequence
// reloads it into a fresh GPU block instead of computing it again.
//
// Owned by one EngineModel; not thread-safe. Block ids are indexes in [0, num_blocks).
class KvCache {
 public:
  // REQUIRES: num_blocks > 0, host_blocks >= 0 (0: no host tier).
  explicit KvCache(int num_blocks, int host_blocks = 0);

  int num_blocks() const { return static_cast<int>(ref_counts_.size()); }
  int FreeBlocks() const { return free_count_; }
  // Fraction of blocks held by at least one sequence, in [0, 1].
  double Usage() const;

  // The number of leading hashes of `hashes` whose blocks are cached (in use or free).
  size_t MatchLength(std::span<const uint64_t> hashes) const;

  // The number of hashes of `hashes` from index `from` on, consecutive, that the host tier
  // holds (0 without one). Reloading them needs free GPU blocks, as computing them would.
  size_t HostMatchLength(std::span<const uint64_t> hashes, size_t from) const;

  // Marks `hashes` most recently used in the host tier (they were just reloaded from it).
  void TouchHost(std::span<const uint64_t> hashes);

  // Whether a sequence needing `total_blocks` blocks, whose first `matched` come from the cache
  // (matched <= MatchLength(hashes)), can get them now.
  bool CanAllocate(std::span<const uint64_t> hashes, size_t matched, size_t total_blocks) const;

  // Takes the `matched` cached blocks for the leading hashes and `total_blocks - matched` free
  // ones, evicting cached free blocks as needed. REQUIRES: CanAllocate(...).
  std::vector<int> Allocate(std::span<const uint64_t> hashes, size_t matched, size_t total_blocks);

  // Adds one free block to `blocks`. Returns false, leaving `blocks` as it is, when none is
  // free.
  bool AppendBlock(std::vector<int>& blocks);

  // Registers blocks[i] under hashes[i] for every i < hashes.size() not yet registered, once
  // their tokens are computed. A hash already held by another block is left with that block.
  // REQUIRES: hashes.size() <= blocks.size().
  void Register(std::span<const int> blocks, std::span<const uint64_t> hashes);

  // Drops one reference to each block; blocks no longer used become free, keeping their hash.
  // Later blocks of a sequence are freed first so its shared head outlives its tail.
  void Release(std::span<const int> blocks);

 private:
  static constexpr int kNone = -1;
  // The free list, least recently freed first: intrusive, so moving a block is O(1).
  void PushFree(int block);
  void RemoveFree(int block);
  int PopFree();

  std::vector<int> ref_counts_;
  std::vector<uint64_t> hashes_;
  std::vector<bool> hashed_;
  std::vector<int> prev_;
  std::vector<int> next_;
  int head_ = kNone;
  int tail_ = kNone;
  int free_count_ = 0;
  std::unordered_map<uint64_t, int> block_of_hash_;
  // The host tier: hashes, most recently used at the front.
  size_t host_capacity_;
  std::list<uint64_t> host_order_;
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> host_position_;

  // Puts `hash` at the front of the host tier, evicting its least recently used beyond capacity.
  void OffloadToHost(uint64_t hash);
};

}  // namespace strata::engine
