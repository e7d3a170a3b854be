#include "engine/kv_cache.h"

#include <algorithm>

#include "common/check.h"

namespace strata::engine {

KvCache::KvCache(int num_blocks, int host_blocks)
    : ref_counts_(num_blocks, 0),
      hashes_(num_blocks, 0),
      hashed_(num_blocks, false),
      prev_(num_blocks, kNone),
      next_(num_blocks, kNone),
      host_capacity_(static_cast<size_t>(std::max(host_blocks, 0))) {
  STRATA_CHECK(num_blocks > 0);
  STRATA_CHECK(host_blocks >= 0);
  for (int block = 0; block < num_blocks; ++block) PushFree(block);
}

double KvCache::Usage() const {
  return static_cast<double>(num_blocks() - free_count_) / static_cast<double>(num_blocks());
}

size_t KvCache::MatchLength(std::span<const uint64_t> hashes) const {
  size_t matched = 0;
  while (matched < hashes.size() && block_of_hash_.contains(hashes[matched])) ++matched;
  return matched;
}

size_t KvCache::HostMatchLength(std::span<const uint64_t> hashes, size_t from) const {
  size_t matched = 0;
  while (from + matched < hashes.size() && host_position_.contains(hashes[from + matched])) {
    ++matched;
  }
  return matched;
}

void KvCache::TouchHost(std::span<const uint64_t> hashes) {
  // Last first, so that the leading blocks, which every match needs, end up most recent.
  for (auto it = hashes.rbegin(); it != hashes.rend(); ++it) {
    auto found = host_position_.find(*it);
    if (found != host_position_.end()) {
      host_order_.splice(host_order_.begin(), host_order_, found->second);
    }
  }
}

void KvCache::OffloadToHost(uint64_t hash) {
  if (host_capacity_ == 0) return;
  auto found = host_position_.find(hash);
  if (found != host_position_.end()) {
    host_order_.splice(host_order_.begin(), host_order_, found->second);
    return;
  }
  host_order_.push_front(hash);
  host_position_.emplace(hash, host_order_.begin());
  if (host_order_.size() > host_capacity_) {
    host_position_.erase(host_order_.back());
    host_order_.pop_back();
  }
}

bool KvCache::CanAllocate(std::span<const uint64_t> hashes, size_t matched,
                          size_t total_blocks) const {
  STRATA_CHECK(matched <= hashes.size() && matched <= total_blocks);
  // Cached blocks that are free now leave the free list when reused.
  size_t reused_free = 0;
  for (size_t i = 0; i < matched; ++i) {
    if (ref_counts_[block_of_hash_.at(hashes[i])] == 0) ++reused_free;
  }
  return total_blocks - matched <= static_cast<size_t>(free_count_) - reused_free;
}

std::vector<int> KvCache::Allocate(std::span<const uint64_t> hashes, size_t matched,
                                   size_t total_blocks) {
  STRATA_CHECK(CanAllocate(hashes, matched, total_blocks));
  std::vector<int> blocks;
  blocks.reserve(total_blocks);
  for (size_t i = 0; i < matched; ++i) {
    int block = block_of_hash_.at(hashes[i]);
    if (ref_counts_[block]++ == 0) RemoveFree(block);
    blocks.push_back(block);
  }
  while (blocks.size() < total_blocks) STRATA_CHECK(AppendBlock(blocks));
  return blocks;
}

bool KvCache::AppendBlock(std::vector<int>& blocks) {
  if (free_count_ == 0) return false;
  int block = PopFree();
  if (hashed_[block]) {
    // Evicted from the GPU: its KV goes to host memory, if there is a host tier.
    block_of_hash_.erase(hashes_[block]);
    hashed_[block] = false;
    OffloadToHost(hashes_[block]);
  }
  ref_counts_[block] = 1;
  blocks.push_back(block);
  return true;
}

void KvCache::Register(std::span<const int> blocks, std::span<const uint64_t> hashes) {
  STRATA_CHECK(hashes.size() <= blocks.size());
  for (size_t i = 0; i < hashes.size(); ++i) {
    int block = blocks[i];
    if (hashed_[block]) continue;
    if (block_of_hash_.emplace(hashes[i], block).second) {
      hashes_[block] = hashes[i];
      hashed_[block] = true;
    }
  }
}

void KvCache::Release(std::span<const int> blocks) {
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    STRATA_CHECK(ref_counts_[*it] > 0);
    if (--ref_counts_[*it] == 0) PushFree(*it);
  }
}

void KvCache::PushFree(int block) {
  prev_[block] = tail_;
  next_[block] = kNone;
  if (tail_ != kNone) {
    next_[tail_] = block;
  } else {
    head_ = block;
  }
  tail_ = block;
  ++free_count_;
}

void KvCache::RemoveFree(int block) {
  if (prev_[block] != kNone) {
    next_[prev_[block]] = next_[block];
  } else {
    head_ = next_[block];
  }
  if (next_[block] != kNone) {
    prev_[next_[block]] = prev_[block];
  } else {
    tail_ = prev_[block];
  }
  prev_[block] = next_[block] = kNone;
  --free_count_;
}

int KvCache::PopFree() {
  int block = head_;
  STRATA_CHECK(block != kNone);
  RemoveFree(block);
  return block;
}

}  // namespace strata::engine
