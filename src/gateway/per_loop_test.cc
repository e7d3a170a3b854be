#include "gateway/per_loop.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace strata::gateway {
namespace {

struct Counts {
  std::atomic<int64_t> requests{0};
  std::atomic<int64_t> tokens{0};
};

TEST(PerLoop, SumsEveryLoopsCopyOfOneField) {
  PerLoop<Counts> counts;
  counts.At(0).requests += 2;
  counts.At(1).requests += 3;
  counts.At(1).tokens += 7;
  EXPECT_EQ(counts.Sum(&Counts::requests), 5);
  EXPECT_EQ(counts.Sum(&Counts::tokens), 7);
}

TEST(PerLoop, LoopsBeyondTheCopiesShareOneAndStillAddUp) {
  PerLoop<Counts> counts;
  const size_t loops = 3 * std::max<size_t>(1, std::thread::hardware_concurrency()) + 1;
  std::vector<std::thread> threads;
  for (size_t loop = 0; loop < loops; ++loop) {
    threads.emplace_back([&counts, loop] {
      for (int i = 0; i < 1000; ++i) counts.At(loop).requests.fetch_add(1);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counts.Sum(&Counts::requests), static_cast<int64_t>(loops) * 1000);
}

TEST(PerLoop, CopiesLieOnMemoryOfTheirOwn) {
  PerLoop<Counts> counts;
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one copy on one core";
  const auto first = reinterpret_cast<uintptr_t>(&counts.At(0));
  const auto second = reinterpret_cast<uintptr_t>(&counts.At(1));
  EXPECT_GE(second - first, 128u);
  EXPECT_EQ(first % 128, 0u);
}

}  // namespace
}  // namespace strata::gateway
