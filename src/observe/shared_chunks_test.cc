#include "observe/shared_chunks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

namespace strata::observe {
namespace {

using Builder = SharedChunksBuilder<int, int>;

// The values of `chunks`, in order.
std::vector<int> Values(const SharedChunks<int>& chunks) {
  std::vector<int> values;
  for (const std::shared_ptr<const int>& value : chunks) values.push_back(*value);
  return values;
}

TEST(SharedChunksTest, IteratesEveryChunkInOrder) {
  SharedChunks<int> empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.begin(), empty.end());
  EXPECT_TRUE(SharedChunks<int>(SharedChunks<int>::Chunk{}).chunks().empty());

  auto chunk = [](std::vector<int> values) {
    SharedChunks<int>::Chunk items;
    for (int value : values) items.push_back(std::make_shared<const int>(value));
    return std::make_shared<const SharedChunks<int>::Chunk>(std::move(items));
  };
  SharedChunks<int> two({chunk({1, 2}), chunk({3})});
  EXPECT_EQ(two.size(), 3u);
  EXPECT_EQ(Values(two), (std::vector<int>{1, 2, 3}));
}

TEST(SharedChunksBuilderTest, FollowsAMapAndSharesWhatAChangeDoesNotTouch) {
  Builder builder;
  std::map<int, int> expected;
  std::mt19937 random(7);
  SharedChunks<int> before = builder.Build();
  for (int step = 0; step < 5000; ++step) {
    // Mostly growth at first, then as many erases as puts; keys from a range that makes both
    // hit existing keys.
    const int key = static_cast<int>(random() % 2000) + 1;
    const bool erase = random() % 100 < (step < 2000 ? 20 : 50);
    if (erase) {
      builder.Erase(key);
      expected.erase(key);
    } else {
      builder.Put(key, std::make_shared<const int>(step));
      expected[key] = step;
    }
    SharedChunks<int> after = builder.Build();
    std::vector<int> values;
    for (const auto& [k, value] : expected) values.push_back(value);
    ASSERT_EQ(Values(after), values) << "step " << step;
    ASSERT_EQ(after.size(), expected.size());

    // One change makes at most two new chunks (a split) and leaves every other one shared.
    const std::set<std::shared_ptr<const SharedChunks<int>::Chunk>> old(before.chunks().begin(),
                                                                        before.chunks().end());
    size_t fresh = 0;
    for (const auto& chunk : after.chunks()) {
      ASSERT_FALSE(chunk->empty());
      ASSERT_LE(chunk->size(), 2 * Builder::kChunkSize);
      if (old.count(chunk) == 0) ++fresh;
    }
    ASSERT_LE(fresh, 2u) << "step " << step;
    // Neighbours hold more than one chunk's worth together, so the chunks stay few.
    ASSERT_LE(after.chunks().size(), 2 * expected.size() / Builder::kChunkSize + 1);
    before = std::move(after);
  }
  EXPECT_GT(before.chunks().size(), 4u);
}

TEST(SharedChunksBuilderTest, BuildsAgainWithoutChangesShareEveryChunk) {
  Builder builder;
  for (int key = 1; key <= 500; ++key) builder.Put(key, std::make_shared<const int>(key));
  SharedChunks<int> first = builder.Build();
  SharedChunks<int> second = builder.Build();
  EXPECT_EQ(first.chunks(), second.chunks());
  builder.Erase(1000);  // absent: nothing changes
  EXPECT_EQ(builder.Build().chunks(), first.chunks());
  builder.Clear();
  EXPECT_TRUE(builder.Build().empty());
}

}  // namespace
}  // namespace strata::observe
