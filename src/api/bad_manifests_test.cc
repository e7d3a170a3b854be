// Malformed manifests as data: each testdata/manifests/bad/NN-name.yaml starts with one or more
// "# expect: <message>" lines, the exact errors its decoding must report (with the file named
// by its base name), in order. One driver runs them all.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/manifest.h"

namespace strata::api {
namespace {

namespace fs = std::filesystem;

fs::path BadDir() {
  const char* root = std::getenv("STRATA_SOURCE_DIR");
  return fs::path(root != nullptr ? root : ".") / "testdata" / "manifests" / "bad";
}

std::string ExpectedErrors(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::string expected;
  const std::string prefix = "# expect: ";
  while (std::getline(in, line) && line.rfind(prefix, 0) == 0) {
    expected += (expected.empty() ? "" : "\n") + line.substr(prefix.size());
  }
  return expected;
}

TEST(BadManifestsTest, EachIsRejectedWithItsExactMessage) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(BadDir())) {
    if (e.path().extension() == ".yaml" || e.path().extension() == ".json") {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 30u) << BadDir();
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string expected = ExpectedErrors(text);
    ASSERT_FALSE(expected.empty()) << file << " has no \"# expect: \" line";
    Result<std::vector<Object>> decoded = DecodeManifests({{file.filename().string(), text}});
    ASSERT_FALSE(decoded.has_value()) << file << " decoded without error";
    EXPECT_EQ(decoded.error().message(), expected) << file;
  }
}

}  // namespace
}  // namespace strata::api
