#include "gateway/prefix_index.h"

#include <xxhash.h>

#include "common/check.h"

namespace strata::gateway {

PrefixIndex::PrefixIndex(size_t block_bytes, size_t blocks_per_endpoint)
    : block_bytes_(block_bytes), blocks_per_endpoint_(blocks_per_endpoint) {
  STRATA_CHECK(block_bytes > 0);
  STRATA_CHECK(blocks_per_endpoint > 0);
}

std::vector<uint64_t> PrefixIndex::HashBlocks(std::string_view prompt, size_t block_bytes) {
  STRATA_CHECK(block_bytes > 0);
  std::vector<uint64_t> hashes;
  hashes.reserve(prompt.size() / block_bytes);
  uint64_t previous = 0;
  for (size_t offset = 0; offset + block_bytes <= prompt.size(); offset += block_bytes) {
    // Seeding each block with the previous block's hash makes equal blocks after different
    // prefixes hash differently, as an engine's prefix cache keys them.
    previous = XXH3_64bits_withSeed(prompt.data() + offset, block_bytes, previous);
    hashes.push_back(previous);
  }
  return hashes;
}

const PrefixIndex::Lru* PrefixIndex::Find(std::string_view endpoint_id) const {
  auto it = endpoints_.find(std::string(endpoint_id));
  return it == endpoints_.end() ? nullptr : &it->second;
}

size_t PrefixIndex::MatchLength(std::string_view endpoint_id,
                                std::span<const uint64_t> block_hashes) const {
  const Lru* lru = Find(endpoint_id);
  if (lru == nullptr) return 0;
  size_t matched = 0;
  while (matched < block_hashes.size() && lru->position.contains(block_hashes[matched])) {
    ++matched;
  }
  return matched;
}

void PrefixIndex::Record(std::string_view endpoint_id, std::span<const uint64_t> block_hashes) {
  if (block_hashes.empty()) return;
  Lru& lru = endpoints_[std::string(endpoint_id)];
  // Leading blocks end up most recent: a match needs them first, so they are the last to go.
  for (auto rit = block_hashes.rbegin(); rit != block_hashes.rend(); ++rit) {
    const uint64_t hash = *rit;
    auto it = lru.position.find(hash);
    if (it != lru.position.end()) {
      lru.order.splice(lru.order.begin(), lru.order, it->second);
    } else {
      lru.order.push_front(hash);
      lru.position.emplace(hash, lru.order.begin());
    }
  }
  while (lru.order.size() > blocks_per_endpoint_) {
    lru.position.erase(lru.order.back());
    lru.order.pop_back();
  }
}

void PrefixIndex::Forget(std::string_view endpoint_id) {
  endpoints_.erase(std::string(endpoint_id));
}

size_t PrefixIndex::Size(std::string_view endpoint_id) const {
  const Lru* lru = Find(endpoint_id);
  return lru == nullptr ? 0 : lru->order.size();
}

}  // namespace strata::gateway
