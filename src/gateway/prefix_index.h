#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace strata::gateway {

// Which prompt prefixes each endpoint has probably cached, approximated from the gateway's own
// routing history (the idea of the Gateway API Inference Extension's approximate prefix scorer).
// A prompt is cut into fixed-size byte blocks; block i's hash chains block i-1's hash, so one
// hash stands for the whole prefix up to and including its block. Each endpoint keeps an LRU
// of at most `blocks_per_endpoint` block hashes; the match length of a prompt on an endpoint is
// the number of its leading blocks whose hashes are present.
//
// Owned by one Picker; not thread-safe.
class PrefixIndex {
 public:
  // REQUIRES: block_bytes > 0, blocks_per_endpoint > 0.
  PrefixIndex(size_t block_bytes, size_t blocks_per_endpoint);

  // The chained hashes of the complete blocks of `prompt` (a trailing partial block is not
  // hashed: an engine caches whole blocks only). Deterministic across processes and runs.
  static std::vector<uint64_t> HashBlocks(std::string_view prompt, size_t block_bytes);

  size_t block_bytes() const { return block_bytes_; }

  // The number of leading hashes of `block_hashes` that `endpoint_id` holds; 0 for an endpoint
  // never recorded.
  size_t MatchLength(std::string_view endpoint_id, std::span<const uint64_t> block_hashes) const;

  // Marks every hash of `block_hashes` as most recently used on `endpoint_id`, evicting the
  // least recently used hashes beyond the capacity.
  void Record(std::string_view endpoint_id, std::span<const uint64_t> block_hashes);

  // Drops everything known about `endpoint_id` (it left the endpoint set or restarted).
  void Forget(std::string_view endpoint_id);

  // The number of hashes held for `endpoint_id`.
  size_t Size(std::string_view endpoint_id) const;

 private:
  // One endpoint's LRU: most recently used at the front.
  struct Lru {
    std::list<uint64_t> order;
    std::unordered_map<uint64_t, std::list<uint64_t>::iterator> position;
  };

  const Lru* Find(std::string_view endpoint_id) const;

  size_t block_bytes_;
  size_t blocks_per_endpoint_;
  std::unordered_map<std::string, Lru> endpoints_;
};

}  // namespace strata::gateway
