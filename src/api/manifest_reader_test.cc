#include "api/manifest_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace strata::api {
namespace {

namespace fs = std::filesystem;

class ManifestReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata-reader-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "b" / "deeper");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const fs::path& relative, const std::string& text) {
    std::ofstream(dir_ / relative) << text;
  }

  fs::path dir_;
};

TEST_F(ManifestReaderTest, ReadsADirectoryRecursivelyInSortedOrder) {
  Write("z.yaml", "z");
  Write("a.json", "a");
  Write("b/deeper/c.yml", "c");
  Write("b/notes.txt", "not a manifest");
  std::istringstream no_stdin;
  Result<std::vector<ManifestSource>> sources = ReadManifestSources(dir_.string(), no_stdin);
  ASSERT_TRUE(sources.has_value()) << sources.error().ToString();
  ASSERT_EQ(sources->size(), 3u);
  EXPECT_EQ((*sources)[0].name, (dir_ / "a.json").string());
  EXPECT_EQ((*sources)[1].name, (dir_ / "b/deeper/c.yml").string());
  EXPECT_EQ((*sources)[2].name, (dir_ / "z.yaml").string());
  EXPECT_EQ((*sources)[1].text, "c");
}

TEST_F(ManifestReaderTest, ReadsOneFileAndStdin) {
  Write("job.yaml", "kind: Job\n");
  std::istringstream in("from stdin");
  Result<std::vector<ManifestSource>> file = ReadManifestSources((dir_ / "job.yaml").string(), in);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->front().text, "kind: Job\n");
  Result<std::vector<ManifestSource>> piped = ReadManifestSources("-", in);
  ASSERT_TRUE(piped.has_value());
  EXPECT_EQ(piped->front().name, "<stdin>");
  EXPECT_EQ(piped->front().text, "from stdin");
}

TEST_F(ManifestReaderTest, NamesAMissingPathAndAnEmptyDirectory) {
  std::istringstream in;
  Result<std::vector<ManifestSource>> missing = ReadManifestSources((dir_ / "nope").string(), in);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message(), (dir_ / "nope").string() + ": no such file or directory");
  Result<std::vector<ManifestSource>> empty = ReadManifestSources((dir_ / "b").string(), in);
  ASSERT_FALSE(empty.has_value());
  EXPECT_NE(empty.error().message().find("no *.yaml, *.yml or *.json files"), std::string::npos);
}

}  // namespace
}  // namespace strata::api
