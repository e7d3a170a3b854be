#include "gateway/prefix_index.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::gateway {
namespace {

TEST(PrefixIndexTest, HashesOnlyCompleteBlocks) {
  EXPECT_EQ(PrefixIndex::HashBlocks("abcdefgh", 4).size(), 2u);
  EXPECT_EQ(PrefixIndex::HashBlocks("abcdefghij", 4).size(), 2u);
  EXPECT_TRUE(PrefixIndex::HashBlocks("abc", 4).empty());
}

TEST(PrefixIndexTest, HashesChainSoEqualBlocksAfterDifferentPrefixesDiffer) {
  auto a = PrefixIndex::HashBlocks("xxxxSAME", 4);
  auto b = PrefixIndex::HashBlocks("yyyySAME", 4);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_NE(a[1], b[1]);
  EXPECT_EQ(PrefixIndex::HashBlocks("xxxxSAMEtail", 4)[1], a[1]);
}

TEST(PrefixIndexTest, MatchLengthCountsLeadingBlocksOnly) {
  PrefixIndex index(4, 100);
  index.Record("e1", PrefixIndex::HashBlocks("aaaabbbbcccc", 4));
  EXPECT_EQ(index.MatchLength("e1", PrefixIndex::HashBlocks("aaaabbbbdddd", 4)), 2u);
  EXPECT_EQ(index.MatchLength("e1", PrefixIndex::HashBlocks("zzzzbbbbcccc", 4)), 0u);
  EXPECT_EQ(index.MatchLength("e2", PrefixIndex::HashBlocks("aaaabbbbcccc", 4)), 0u);
}

TEST(PrefixIndexTest, EvictsLeastRecentlyUsedAndKeepsLeadingBlocksLongest) {
  PrefixIndex index(4, 3);
  auto first = PrefixIndex::HashBlocks("aaaabbbbccccdddd", 4);
  index.Record("e1", first);
  EXPECT_EQ(index.Size("e1"), 3u);
  // The prompt's leading blocks survive; the tail was evicted.
  EXPECT_EQ(index.MatchLength("e1", first), 3u);
  index.Record("e1", PrefixIndex::HashBlocks("qqqqrrrr", 4));
  EXPECT_EQ(index.MatchLength("e1", first), 1u);
}

TEST(PrefixIndexTest, ForgetDropsAnEndpoint) {
  PrefixIndex index(4, 10);
  auto hashes = PrefixIndex::HashBlocks("aaaabbbb", 4);
  index.Record("e1", hashes);
  index.Forget("e1");
  EXPECT_EQ(index.MatchLength("e1", hashes), 0u);
  EXPECT_EQ(index.Size("e1"), 0u);
}

}  // namespace
}  // namespace strata::gateway
