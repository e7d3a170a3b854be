#include "node/log_rotation.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace strata::node {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Append(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::app) << text;
}

class LogRotationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/strata-log-rotation-XXXXXX";
    dir_ = mkdtemp(pattern);
    log_ = dir_ / "worker.log";
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  fs::path log_;
};

TEST_F(LogRotationTest, SmallOrMissingFileIsLeftAlone) {
  Result<bool> rotated = RotateLogIfLarger(log_.string(), 100, 2);
  ASSERT_TRUE(rotated);
  EXPECT_FALSE(*rotated);
  Append(log_, std::string(100, 'a'));
  rotated = RotateLogIfLarger(log_.string(), 100, 2);
  ASSERT_TRUE(rotated);
  EXPECT_FALSE(*rotated);
  EXPECT_EQ(fs::file_size(log_), 100u);
}

TEST_F(LogRotationTest, KeepsTheNewestGenerationsAndDropsTheOldest) {
  for (char generation : {'a', 'b', 'c'}) {
    Append(log_, std::string(150, generation));
    Result<bool> rotated = RotateLogIfLarger(log_.string(), 100, 2);
    ASSERT_TRUE(rotated) << rotated.error().ToString();
    EXPECT_TRUE(*rotated);
    EXPECT_EQ(fs::file_size(log_), 0u);
  }
  EXPECT_EQ(ReadAll(dir_ / "worker.log.1"), std::string(150, 'c'));
  EXPECT_EQ(ReadAll(dir_ / "worker.log.2"), std::string(150, 'b'));
  EXPECT_FALSE(fs::exists(dir_ / "worker.log.3"));
}

}  // namespace
}  // namespace strata::node
