#include "common/json_member.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(JsonMemberTest, AbsentMembersAndNonObjectsReadAsNull) {
  const nlohmann::json object = nlohmann::json::parse(R"({"name": "a", "count": 3})");
  EXPECT_EQ(MemberOrNull(object, "name"), "a");
  EXPECT_TRUE(MemberOrNull(object, "missing").is_null());
  EXPECT_TRUE(MemberOrNull(nlohmann::json::array({1}), "name").is_null());
  EXPECT_TRUE(MemberOrNull(MemberOrNull(object, "missing"), "deeper").is_null());
  EXPECT_EQ(StringMemberOr(object, "name"), "a");
  EXPECT_EQ(StringMemberOr(object, "count", "none"), "none");  // not a string
  EXPECT_EQ(StringMemberOr(object, "missing", "none"), "none");
  EXPECT_TRUE(JsonNull().is_null());
}

}  // namespace
}  // namespace strata
