#include "engine/kv_cache.h"

#include <gtest/gtest.h>

namespace strata::engine {
namespace {

TEST(KvCacheTest, AllocatesAndReleasesBlocks) {
  KvCache kv(4);
  std::vector<uint64_t> none;
  std::vector<int> blocks = kv.Allocate(none, 0, 3);
  EXPECT_EQ(blocks.size(), 3u);
  EXPECT_EQ(kv.FreeBlocks(), 1);
  EXPECT_DOUBLE_EQ(kv.Usage(), 0.75);
  EXPECT_FALSE(kv.CanAllocate(none, 0, 2));
  kv.Release(blocks);
  EXPECT_EQ(kv.FreeBlocks(), 4);
}

TEST(KvCacheTest, RegisteredBlocksAreSharedAndSurviveRelease) {
  KvCache kv(4);
  std::vector<uint64_t> hashes = {11, 22};
  std::vector<int> first = kv.Allocate(hashes, 0, 3);
  kv.Register(first, hashes);
  EXPECT_EQ(kv.MatchLength(hashes), 2u);
  // Shared while in use: the second sequence needs only one new block.
  std::vector<int> second = kv.Allocate(hashes, 2, 3);
  EXPECT_EQ(second[0], first[0]);
  EXPECT_EQ(second[1], first[1]);
  EXPECT_EQ(kv.FreeBlocks(), 0);
  kv.Release(first);
  kv.Release(second);
  EXPECT_EQ(kv.FreeBlocks(), 4);
  // Free but still cached.
  EXPECT_EQ(kv.MatchLength(hashes), 2u);
  EXPECT_EQ(kv.MatchLength(std::vector<uint64_t>{22}), 1u);
}

TEST(KvCacheTest, FreeCachedBlocksAreEvictedLeastRecentlyFreedFirst) {
  KvCache kv(3);
  std::vector<uint64_t> a = {1};
  std::vector<uint64_t> b = {2};
  std::vector<int> blocks_a = kv.Allocate(a, 0, 1);
  kv.Register(blocks_a, a);
  std::vector<int> blocks_b = kv.Allocate(b, 0, 1);
  kv.Register(blocks_b, b);
  kv.Release(blocks_a);  // freed first: evicted first
  kv.Release(blocks_b);
  std::vector<uint64_t> none;
  std::vector<int> fresh = kv.Allocate(none, 0, 2);  // the never-used block, then a's
  EXPECT_EQ(kv.MatchLength(a), 0u);
  EXPECT_EQ(kv.MatchLength(b), 1u);
  EXPECT_FALSE(kv.CanAllocate(none, 0, 2));
  EXPECT_TRUE(kv.CanAllocate(b, 1, 1));  // reusing b's cached block needs no new one
}

TEST(KvCacheTest, ReusingAFreeCachedBlockCountsAgainstFreeBlocks) {
  KvCache kv(2);
  std::vector<uint64_t> hashes = {7};
  std::vector<int> blocks = kv.Allocate(hashes, 0, 1);
  kv.Register(blocks, hashes);
  kv.Release(blocks);
  // Two free blocks, one of which is the cached one: reuse it plus two new ones does not fit.
  EXPECT_FALSE(kv.CanAllocate(hashes, 1, 3));
  EXPECT_TRUE(kv.CanAllocate(hashes, 1, 2));
}

TEST(KvCacheTest, EvictedBlocksGoToTheHostTierAndItsLruDropsTheOldest) {
  KvCache kv(2, /*host_blocks=*/2);
  std::vector<uint64_t> none;
  for (uint64_t hash : {1, 2, 3}) {
    std::vector<uint64_t> one = {hash};
    std::vector<int> blocks = kv.Allocate(one, 0, 1);
    kv.Register(blocks, one);
    kv.Release(blocks);
    // Take both blocks: whatever was cached on the GPU is evicted to the host tier.
    kv.Release(kv.Allocate(none, 0, 2));
  }
  std::vector<uint64_t> chain = {1, 2, 3};
  EXPECT_EQ(kv.MatchLength(chain), 0u);
  // 1 was pushed out of the two-block host tier by 2 and 3.
  EXPECT_EQ(kv.HostMatchLength(chain, 0), 0u);
  EXPECT_EQ(kv.HostMatchLength(chain, 1), 2u);
  kv.TouchHost(std::vector<uint64_t>{2});  // 2 most recent: 3 goes next
  std::vector<uint64_t> four = {4};
  std::vector<int> blocks = kv.Allocate(four, 0, 1);
  kv.Register(blocks, four);
  kv.Release(blocks);
  kv.Release(kv.Allocate(none, 0, 2));
  EXPECT_EQ(kv.HostMatchLength(std::vector<uint64_t>{2}, 0), 1u);
  EXPECT_EQ(kv.HostMatchLength(std::vector<uint64_t>{3}, 0), 0u);
  EXPECT_EQ(kv.HostMatchLength(std::vector<uint64_t>{4}, 0), 1u);
}

TEST(KvCacheTest, WithoutAHostTierEvictedBlocksAreGone) {
  KvCache kv(1);
  std::vector<uint64_t> one = {1};
  std::vector<int> blocks = kv.Allocate(one, 0, 1);
  kv.Register(blocks, one);
  kv.Release(blocks);
  std::vector<uint64_t> none;
  kv.Release(kv.Allocate(none, 0, 1));
  EXPECT_EQ(kv.HostMatchLength(one, 0), 0u);
}

}  // namespace
}  // namespace strata::engine
