#include "common/base64.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(Base64Test, EncodesRfc4648Vectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
}

TEST(Base64Test, RoundTripsEveryByte) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  for (size_t length : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{255}, size_t{256}}) {
    std::string part = bytes.substr(0, length);
    EXPECT_EQ(Base64Decode(Base64Encode(part)), part) << length;
  }
}

TEST(Base64Test, RefusesWhatIsNotPaddedStandardBase64) {
  EXPECT_EQ(Base64Decode("Zm9vYg=="), "foob");
  EXPECT_FALSE(Base64Decode("Zm9vYg"));    // unpadded
  EXPECT_FALSE(Base64Decode("Zm9v!mFy"));  // outside the alphabet
  EXPECT_FALSE(Base64Decode("Zg==Zm8="));  // padding in the middle
  EXPECT_FALSE(Base64Decode("Zm9-YmFy"));  // URL-safe alphabet
  EXPECT_FALSE(Base64Decode("Z==="));      // three padding characters
}

}  // namespace
}  // namespace strata
