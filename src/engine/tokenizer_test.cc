#include "engine/tokenizer.h"

#include <gtest/gtest.h>

namespace strata::engine {
namespace {

TEST(TokenizerTest, SplitsWordsAndPunctuationAndSkipsSpaces) {
  EXPECT_EQ(CountTokens("Hello, world!"), 4u);
  EXPECT_EQ(CountTokens("  a\tb\n\nc42  "), 3u);
  EXPECT_EQ(CountTokens(""), 0u);
  EXPECT_EQ(Tokenize("Hello, world!").size(), 4u);
}

TEST(TokenizerTest, EqualWordsGiveEqualIdsAndTheSameTextTheSameIds) {
  std::vector<TokenId> ids = Tokenize("the cat and the dog");
  EXPECT_EQ(ids[0], ids[3]);
  EXPECT_NE(ids[0], ids[1]);
  EXPECT_EQ(Tokenize("the cat and the dog"), ids);
}

TEST(TokenizerTest, GeneratedTokensAreDeterministicWords) {
  uint64_t seed = GenerationSeed(Tokenize("tell me a story"));
  EXPECT_EQ(GeneratedToken(seed, 3), GeneratedToken(seed, 3));
  std::string text;
  for (size_t i = 0; i < 20; ++i) text += GeneratedTokenText(GeneratedToken(seed, i));
  EXPECT_FALSE(text.empty());
  EXPECT_NE(seed, GenerationSeed(Tokenize("tell me a poem")));
}

TEST(ChainedBlockHashesTest, SharedPrefixSharesLeadingHashesOnly) {
  std::vector<TokenId> a = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<TokenId> b = {1, 2, 3, 4, 5, 6, 0, 8, 9};
  std::vector<uint64_t> ha = ChainedBlockHashes(a, 3);
  std::vector<uint64_t> hb = ChainedBlockHashes(b, 3);
  ASSERT_EQ(ha.size(), 3u);
  EXPECT_EQ(ha[0], hb[0]);
  EXPECT_EQ(ha[1], hb[1]);
  EXPECT_NE(ha[2], hb[2]);
  // The same block after a different prefix hashes differently.
  std::vector<uint64_t> hc = ChainedBlockHashes(std::vector<TokenId>{0, 0, 0, 4, 5, 6}, 3);
  EXPECT_NE(hc[1], ha[1]);
  EXPECT_EQ(ChainedBlockHashes(std::vector<TokenId>{1, 2}, 3).size(), 0u);
}

}  // namespace
}  // namespace strata::engine
