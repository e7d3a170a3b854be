#include "common/atomic_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace strata {
namespace {

std::string Read(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(AtomicFileTest, ReplacesWholeWithExactlyTheModeAsked) {
  char pattern[] = "/tmp/atomic_file_test.XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  const std::string path = dir + "/secret";
  ASSERT_TRUE(ReplaceFileAtomically(path, "first\n", 0600).ok());
  ASSERT_TRUE(ReplaceFileAtomically(path, "second\n", 0600).ok());
  EXPECT_EQ(Read(path), "second\n");
  struct stat info {};
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  Status failed = ReplaceFileAtomically(dir + "/missing/file", "x", 0644);
  EXPECT_EQ(failed.code(), StatusCode::kUnavailable);
  EXPECT_NE(failed.message().find(dir + "/missing/file.tmp"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace strata
