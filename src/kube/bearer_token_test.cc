#include "kube/bearer_token.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace strata::kube {
namespace {

TEST(BearerTokenSourceTest, ARotatedTokenFileIsReadAgainAfterAMinute) {
  std::string file =
      (std::filesystem::temp_directory_path() / ("bearer_token_test." + std::to_string(::getpid())))
          .string();
  std::ofstream(file) << "first\n";
  FakeClock clock;
  BearerTokenSource source("first", file, &clock);
  EXPECT_EQ(source.Token(), "first");

  std::ofstream(file) << "second\n";  // the kubelet rotated the projected token
  clock.Advance(std::chrono::seconds(59));
  EXPECT_EQ(source.Token(), "first");
  clock.Advance(std::chrono::seconds(1));
  EXPECT_EQ(source.Token(), "second");

  std::ofstream(file) << "third";
  EXPECT_TRUE(source.Invalidate());  // after a 401: read again at once
  EXPECT_EQ(source.Token(), "third");

  std::filesystem::remove(file);  // a file gone missing keeps the last token
  clock.Advance(std::chrono::minutes(2));
  EXPECT_EQ(source.Token(), "third");
}

TEST(BearerTokenSourceTest, AStaticTokenIsNeverReRead) {
  FakeClock clock;
  BearerTokenSource source("static", "", &clock);
  EXPECT_FALSE(source.Invalidate());
  clock.Advance(std::chrono::hours(1));
  EXPECT_EQ(source.Token(), "static");
}

}  // namespace
}  // namespace strata::kube
