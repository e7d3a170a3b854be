#include "node/pod_cidr.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::node {
namespace {

using ::testing::HasSubstr;

TEST(PodCidrTest, HandsOutAddressesInTurnSkippingThoseInUse) {
  Result<PodCidr> cidr = PodCidr::Parse("127.0.101.1/24");  // host bits are dropped
  ASSERT_TRUE(cidr.has_value()) << cidr.error().ToString();
  EXPECT_EQ(cidr->ToString(), "127.0.101.0/24");
  EXPECT_EQ(*cidr->Pick({}), "127.0.101.1");
  EXPECT_EQ(*cidr->Pick({"127.0.101.2"}), "127.0.101.3");
  // A released address comes back last: the next pick moves on.
  EXPECT_EQ(*cidr->Pick({}), "127.0.101.4");
  EXPECT_TRUE(cidr->Contains("127.0.101.200"));
  EXPECT_FALSE(cidr->Contains("127.0.100.1"));
  EXPECT_FALSE(cidr->Contains("not an ip"));
}

TEST(PodCidrTest, NeverGivesTheNetworkOrBroadcastAddressAndSaysWhenFull) {
  Result<PodCidr> cidr = PodCidr::Parse("10.0.0.0/30");  // two hosts
  ASSERT_TRUE(cidr.has_value());
  EXPECT_EQ(*cidr->Pick({}), "10.0.0.1");
  EXPECT_EQ(*cidr->Pick({}), "10.0.0.2");
  EXPECT_EQ(*cidr->Pick({}), "10.0.0.1") << "wraps around";
  Result<std::string> full = cidr->Pick({"10.0.0.1", "10.0.0.2"});
  ASSERT_FALSE(full.has_value());
  EXPECT_THAT(full.error().message(), HasSubstr("every address is in use"));
}

TEST(PodCidrTest, RefusesWhatIsNotAnIpv4Range) {
  for (const char* text : {"127.0.101.0", "::1/64", "127.0.101.0/31", "127.0.101.0/x", "a/24"}) {
    Result<PodCidr> cidr = PodCidr::Parse(text);
    ASSERT_FALSE(cidr.has_value()) << text;
    EXPECT_THAT(cidr.error().message(), HasSubstr(text));
  }
}

}  // namespace
}  // namespace strata::node
