#include "store/label_selector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace strata::store {
namespace {

using ::testing::HasSubstr;

bool Matches(std::string_view selector, const Labels& labels) {
  Result<LabelSelector> parsed = LabelSelector::Parse(selector);
  EXPECT_TRUE(parsed.has_value()) << selector << ": " << parsed.error().ToString();
  return parsed && parsed->Matches(labels);
}

std::string ParseError(std::string_view selector) {
  Result<LabelSelector> parsed = LabelSelector::Parse(selector);
  EXPECT_FALSE(parsed.has_value()) << selector;
  if (parsed) return "";
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  return parsed.error().message();
}

TEST(LabelSelectorTest, EmptySelectorMatchesEverything) {
  EXPECT_TRUE(Matches("", {}));
  EXPECT_TRUE(Matches("  ", {{"a", "b"}}));
}

TEST(LabelSelectorTest, ToStringIsTheCanonicalTextParseReads) {
  for (auto [text, canonical] : std::vector<std::pair<std::string_view, std::string_view>>{
           {"", ""},
           {"a==b", "a=b"},
           {" a = b , c!=d", "a=b,c!=d"},
           {"tier in (gpu, cpu),zone notin (x)", "tier in (gpu,cpu),zone notin (x)"},
           {"a, !b", "a,!b"},
           {"a=", "a="}}) {
    Result<LabelSelector> parsed = LabelSelector::Parse(text);
    ASSERT_TRUE(parsed.has_value()) << text;
    EXPECT_EQ(parsed->ToString(), canonical) << text;
    Result<LabelSelector> again = LabelSelector::Parse(parsed->ToString());
    ASSERT_TRUE(again.has_value()) << canonical;
    EXPECT_EQ(again->ToString(), canonical);
  }
}

TEST(LabelSelectorTest, EqualityOperators) {
  Labels labels{{"team", "a"}, {"tier", "gpu"}};
  EXPECT_TRUE(Matches("team=a", labels));
  EXPECT_TRUE(Matches("team==a", labels));
  EXPECT_FALSE(Matches("team=b", labels));
  EXPECT_TRUE(Matches("team!=b", labels));
  EXPECT_FALSE(Matches("team!=a", labels));
  EXPECT_TRUE(Matches("missing!=a", labels)) << "!= matches objects without the label";
}

TEST(LabelSelectorTest, SetOperators) {
  Labels labels{{"env", "prod"}};
  EXPECT_TRUE(Matches("env in (dev, prod)", labels));
  EXPECT_TRUE(Matches("env in(prod)", labels));
  EXPECT_FALSE(Matches("env in (dev,qa)", labels));
  EXPECT_TRUE(Matches("env notin (dev)", labels));
  EXPECT_FALSE(Matches("env notin (prod)", labels));
  EXPECT_TRUE(Matches("other notin (prod)", labels));
  EXPECT_FALSE(Matches("other in (prod)", labels));
}

TEST(LabelSelectorTest, ExistenceOperators) {
  Labels labels{{"strata.dev/gpu", "h100"}};
  EXPECT_TRUE(Matches("strata.dev/gpu", labels));
  EXPECT_FALSE(Matches("!strata.dev/gpu", labels));
  EXPECT_TRUE(Matches("!spot", labels));
  EXPECT_FALSE(Matches("spot", labels));
}

TEST(LabelSelectorTest, CommaIsAnd) {
  Labels labels{{"a", "1"}, {"b", "2"}};
  EXPECT_TRUE(Matches("a=1, b in (2,3), !c", labels));
  EXPECT_FALSE(Matches("a=1,b=3", labels));
}

TEST(LabelSelectorTest, EmptyValueIsAValue) {
  EXPECT_TRUE(Matches("a=", {{"a", ""}}));
  EXPECT_FALSE(Matches("a=", {{"a", "x"}}));
}

TEST(LabelSelectorTest, ErrorsNameTheOffset) {
  EXPECT_THAT(ParseError("a=b,"), HasSubstr("offset 4: expected a label key"));
  EXPECT_THAT(ParseError("a=b c"), HasSubstr("offset 4: expected ',' or the end"));
  EXPECT_THAT(ParseError("a in x"), HasSubstr("offset 5: expected '(' after 'in'"));
  EXPECT_THAT(ParseError("a notin (x"), HasSubstr("offset 10: expected ',' or ')'"));
  EXPECT_THAT(ParseError("a in ()"), HasSubstr("offset 6: expected a value in the set"));
  EXPECT_THAT(ParseError("a < 3"), HasSubstr("offset 2: expected '=', '==', '!='"));
  EXPECT_THAT(ParseError("a=b$"), HasSubstr("offset 3: invalid character in the value"));
  EXPECT_THAT(ParseError("!"), HasSubstr("offset 1: expected a label key"));
  EXPECT_THAT(ParseError(",a"), HasSubstr("offset 0: expected a label key"));
}

}  // namespace
}  // namespace strata::store
