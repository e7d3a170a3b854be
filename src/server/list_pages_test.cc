#include "server/list_pages.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::server {
namespace {

std::vector<store::Object> Objects(std::initializer_list<const char*> names) {
  std::vector<store::Object> out;
  for (const char* name : names) {
    store::Object object;
    object.key = {"Job", "team-a", name};
    out.push_back(object);
  }
  return out;
}

std::vector<std::string> Names(const ListPage& page) {
  std::vector<std::string> out;
  for (const store::Object& object : page.items) out.push_back(object.key.name);
  return out;
}

TEST(ListPagesTest, TokensRoundTrip) {
  ListCursor cursor{42, "team-a", "train \"x\""};
  Result<ListCursor> decoded = DecodeContinue(EncodeContinue(cursor));
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  EXPECT_EQ(decoded->first_page_version, 42);
  EXPECT_EQ(decoded->after_namespace, "team-a");
  EXPECT_EQ(decoded->after_name, "train \"x\"");
  EXPECT_EQ(EncodeContinue(cursor).find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(ListPagesTest, MalformedTokensNameTheField) {
  const std::vector<std::string> tokens = {"a", "zz", "7b7d", "7b2276223a2d317d",
                                           EncodeContinue({}) + "0"};
  for (const std::string& token : tokens) {
    Result<ListCursor> decoded = DecodeContinue(token);
    ASSERT_FALSE(decoded.has_value()) << token;
    EXPECT_EQ(decoded.error().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(decoded.error().message(), ::testing::StartsWith("continue: ")) << token;
  }
}

TEST(ListPagesTest, PagesFollowTheCursorAndTheLastHasNone) {
  ListPage first = CutPage(Objects({"a", "b", "c", "d", "e"}), std::nullopt, 2, 7);
  EXPECT_EQ(Names(first), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(first.remaining, 3);
  ASSERT_TRUE(first.next.has_value());
  EXPECT_EQ(first.next->first_page_version, 7);
  // "b" was deleted and "bb" created since: the next page starts after the cursor's key.
  ListPage second = CutPage(Objects({"a", "bb", "c", "d", "e"}), first.next, 2, 9);
  EXPECT_EQ(Names(second), (std::vector<std::string>{"bb", "c"}));
  ASSERT_TRUE(second.next.has_value());
  EXPECT_EQ(second.next->first_page_version, 9);
  ListPage last = CutPage(Objects({"a", "bb", "c", "d", "e"}), second.next, 2, 9);
  EXPECT_EQ(Names(last), (std::vector<std::string>{"d", "e"}));
  EXPECT_FALSE(last.next.has_value());
  EXPECT_EQ(last.remaining, 0);
}

TEST(ListPagesTest, NoLimitIsOnePage) {
  ListPage all = CutPage(Objects({"a", "b", "c"}), std::nullopt, 0, 1);
  EXPECT_EQ(all.items.size(), 3u);
  EXPECT_FALSE(all.next.has_value());
}

}  // namespace
}  // namespace strata::server
