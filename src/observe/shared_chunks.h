#pragma once

#include <cstddef>
#include <iterator>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace strata::observe {

// An immutable sequence of shared immutable T, held in shared immutable chunks, so that two
// sequences that differ in a few items share every chunk those items are not in
// (SharedChunksBuilder makes such successors). Iterating yields each item's shared_ptr, chunk
// by chunk. A plain value: copies share the chunks; thread-safe for concurrent reads.
template <typename T>
class SharedChunks {
 public:
  using Chunk = std::vector<std::shared_ptr<const T>>;

  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::shared_ptr<const T>;
    using difference_type = std::ptrdiff_t;
    using pointer = const value_type*;
    using reference = const value_type&;

    Iterator() = default;
    reference operator*() const { return (*(*chunks_)[chunk_])[item_]; }
    pointer operator->() const { return &**this; }
    Iterator& operator++() {
      if (++item_ == (*chunks_)[chunk_]->size()) {
        ++chunk_;
        item_ = 0;
      }
      return *this;
    }
    Iterator operator++(int) {
      Iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const Iterator& other) const {
      return chunk_ == other.chunk_ && item_ == other.item_;
    }

   private:
    friend class SharedChunks;
    Iterator(const std::vector<std::shared_ptr<const Chunk>>* chunks, size_t chunk)
        : chunks_(chunks), chunk_(chunk) {}

    const std::vector<std::shared_ptr<const Chunk>>* chunks_ = nullptr;
    size_t chunk_ = 0;
    size_t item_ = 0;
  };

  SharedChunks() = default;
  // `items` as one chunk (none when empty).
  explicit SharedChunks(Chunk items) {
    if (!items.empty()) chunks_.push_back(std::make_shared<const Chunk>(std::move(items)));
    size_ = chunks_.empty() ? 0 : chunks_.front()->size();
  }
  // The items of `chunks`, in order. REQUIRES: no chunk is empty.
  explicit SharedChunks(std::vector<std::shared_ptr<const Chunk>> chunks)
      : chunks_(std::move(chunks)) {
    for (const std::shared_ptr<const Chunk>& chunk : chunks_) size_ += chunk->size();
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Iterator begin() const { return Iterator(&chunks_, 0); }
  Iterator end() const { return Iterator(&chunks_, chunks_.size()); }
  // The chunks themselves: what a successor shares with this sequence.
  const std::vector<std::shared_ptr<const Chunk>>& chunks() const { return chunks_; }

 private:
  std::vector<std::shared_ptr<const Chunk>> chunks_;
  size_t size_ = 0;
};

// A map from Key to shared immutable T that hands out its values, in key order, as
// SharedChunks: Build after a few Puts and Erases makes new chunks only where those keys fall
// and shares the others with the previous Build's result. A chunk holds at most 2 * kChunkSize
// items and any two neighbours more than kChunkSize, so a Build after one change copies
// O(kChunkSize + size / kChunkSize) pointers.
//
// REQUIRES: Key{} sorts before every key put. Owned by one user; not thread-safe.
template <typename Key, typename T>
class SharedChunksBuilder {
 public:
  static constexpr size_t kChunkSize = 64;

  // Sets `key`'s value.
  void Put(const Key& key, std::shared_ptr<const T> value) {
    auto chunk = ChunkOf(key);
    chunk->second.items[key] = std::move(value);
    chunk->second.published.reset();
    if (chunk->second.items.size() > 2 * kChunkSize) Split(chunk);
  }

  // Removes `key`, if present.
  void Erase(const Key& key) {
    if (chunks_.empty()) return;
    auto chunk = ChunkOf(key);
    if (chunk->second.items.erase(key) == 0) return;
    chunk->second.published.reset();
    MergeSmall(chunk);
  }

  void Clear() { chunks_.clear(); }

  // Every value, in key order.
  SharedChunks<T> Build() {
    std::vector<std::shared_ptr<const Published>> chunks;
    chunks.reserve(chunks_.size());
    for (auto& [bound, chunk] : chunks_) {
      if (chunk.items.empty()) continue;  // only the first, when everything is gone
      if (chunk.published == nullptr) {
        Published items;
        items.reserve(chunk.items.size());
        for (const auto& [key, value] : chunk.items) items.push_back(value);
        chunk.published = std::make_shared<const Published>(std::move(items));
      }
      chunks.push_back(chunk.published);
    }
    return SharedChunks<T>(std::move(chunks));
  }

 private:
  using Published = typename SharedChunks<T>::Chunk;
  struct Chunk {
    std::map<Key, std::shared_ptr<const T>> items;
    // What the last Build handed out for `items`; null once they changed.
    std::shared_ptr<const Published> published;
  };
  // By the least key each chunk may hold (the first's is Key{}), up to the next one's.
  using Chunks = std::map<Key, Chunk>;

  typename Chunks::iterator ChunkOf(const Key& key) {
    if (chunks_.empty()) chunks_.emplace(Key{}, Chunk{});
    return std::prev(chunks_.upper_bound(key));
  }

  void Split(typename Chunks::iterator chunk) {
    auto middle = std::next(chunk->second.items.begin(), chunk->second.items.size() / 2);
    Chunk upper;
    upper.items.insert(middle, chunk->second.items.end());
    chunk->second.items.erase(middle, chunk->second.items.end());
    Key bound = upper.items.begin()->first;
    chunks_.emplace_hint(std::next(chunk), std::move(bound), std::move(upper));
  }

  // Folds `chunk` into a neighbour when it is empty or both fit in kChunkSize together, so that
  // any two neighbours hold more than kChunkSize.
  void MergeSmall(typename Chunks::iterator chunk) {
    if (chunk != chunks_.begin() && Fit(std::prev(chunk), chunk)) {
      Merge(std::prev(chunk), chunk);
    } else if (auto next = std::next(chunk); next != chunks_.end() && Fit(chunk, next)) {
      Merge(chunk, next);
    }
  }

  static bool Fit(typename Chunks::iterator lower, typename Chunks::iterator upper) {
    return lower->second.items.empty() || upper->second.items.empty() ||
           lower->second.items.size() + upper->second.items.size() <= kChunkSize;
  }

  void Merge(typename Chunks::iterator lower, typename Chunks::iterator upper) {
    if (!upper->second.items.empty()) {
      lower->second.items.merge(upper->second.items);
      lower->second.published.reset();
    }
    chunks_.erase(upper);
  }

  Chunks chunks_;
};

}  // namespace strata::observe
