#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>

namespace strata::gateway {

// A set of counts that every event loop of the gateway updates on the request path, kept once
// per loop, each copy on memory of its own (128 bytes apart: the adjacent-line prefetcher pairs
// 64-byte lines): a loop's updates then never move a cache line
// to another core, as one shared copy would (two loops on two cores bouncing the line on every
// request). Readers (signals, metrics) sum the copies. There are as many copies as the machine
// has cores, each loop using copy `loop % copies`: loops beyond that share a copy, which stays
// correct because the counts are atomics updated with read-modify-writes.
//
// `Counts` is a struct of std::atomic<int64_t> fields, zero-initialised. Thread-safe.
template <typename Counts>
class PerLoop {
 public:
  PerLoop()
      : copies_(std::max<size_t>(1, std::thread::hardware_concurrency())),
        lines_(std::make_unique<Line[]>(copies_)) {}

  // The copy loop `loop` (its index among the gateway's loops) updates.
  Counts& At(size_t loop) { return lines_[loop % copies_].counts; }
  const Counts& At(size_t loop) const { return lines_[loop % copies_].counts; }

  // The sum of `field` over the copies (acquire loads: a count read after another sees every
  // update the loops made before the one that other read shows).
  int64_t Sum(std::atomic<int64_t> Counts::*field) const {
    int64_t sum = 0;
    for (size_t i = 0; i < copies_; ++i) {
      sum += (lines_[i].counts.*field).load(std::memory_order_acquire);
    }
    return sum;
  }

 private:
  struct alignas(128) Line {
    Counts counts;
  };

  size_t copies_;
  std::unique_ptr<Line[]> lines_;
};

}  // namespace strata::gateway
