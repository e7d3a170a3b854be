#include "gateway/usage.h"

#include <gtest/gtest.h>

namespace strata::gateway {
namespace {

TEST(UsageTest, ReadsUsageFromBody) {
  TokenUsage usage = UsageFromBody(
      R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}})");
  EXPECT_TRUE(usage.reported);
  EXPECT_EQ(usage.prompt_tokens, 12);
  EXPECT_EQ(usage.completion_tokens, 5);
  EXPECT_FALSE(UsageFromBody("not json").reported);
  EXPECT_FALSE(UsageFromBody(R"({"usage":{"prompt_tokens":"x"}})").reported);
  EXPECT_FALSE(UsageFromBody(R"({"usage":{"prompt_tokens":1,"completion_tokens":2)").reported);
  EXPECT_FALSE(UsageFromBody(R"({"usage":[1,2]})").reported);
  // Only the top-level usage counts: not one in a choice, nor text that looks like one.
  usage = UsageFromBody(R"({"choices":[{"message":{"content":""usage":{"prompt_tokens":1}"},)"
                        R"("usage":{"prompt_tokens":7,"completion_tokens":7}}],)"
                        R"("usage":{"prompt_tokens":2,"completion_tokens":3}})");
  EXPECT_TRUE(usage.reported);
  EXPECT_EQ(usage.prompt_tokens, 2);
  EXPECT_EQ(usage.completion_tokens, 3);
}

TEST(UsageTest, CountsStreamedChunksSplitAnywhere) {
  const std::string stream =
      "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\r\n\r\n"
      "data: {\"choices\":[{\"text\":\"!\"}]}\n\n"
      "data: [DONE]\n\n";
  for (size_t split = 0; split < stream.size(); split += 7) {
    StreamUsageCounter counter;
    counter.Feed(stream.substr(0, split));
    counter.Feed(stream.substr(split));
    EXPECT_EQ(counter.content_chunks(), 3);
    EXPECT_TRUE(counter.done());
    EXPECT_FALSE(counter.Usage().reported);
    EXPECT_EQ(counter.Usage().completion_tokens, 3);
  }
}

TEST(UsageTest, PrefersTheEnginesReportAndSurvivesACutStream) {
  StreamUsageCounter counter;
  counter.Feed("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n");
  counter.Feed(
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":1}}\n\n");
  EXPECT_TRUE(counter.Usage().reported);
  EXPECT_EQ(counter.Usage().prompt_tokens, 4);
  StreamUsageCounter cut;
  cut.Feed("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"cho");
  EXPECT_EQ(cut.Usage().completion_tokens, 1);
  EXPECT_FALSE(cut.done());
}

}  // namespace
}  // namespace strata::gateway
