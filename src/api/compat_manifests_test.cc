// Manifests in the shapes other projects publish for their users, as data: every file of
// testdata/manifests/compat/<project>/ decodes (what `strata apply --dry-run` does), into the
// number of objects and with the number of warnings its "# objects: N" and "# warnings: N"
// lines state, and every kind they use appears in at least five documents.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "api/manifest.h"
#include "common/yaml_json.h"

namespace strata::api {
namespace {

namespace fs = std::filesystem;

fs::path CompatDir() {
  const char* root = std::getenv("STRATA_SOURCE_DIR");
  return fs::path(root != nullptr ? root : ".") / "testdata" / "manifests" / "compat";
}

int Declared(const std::string& text, const std::string& what) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("# " + what + ": ([0-9]+)"))) return -1;
  return std::stoi(m[1]);
}

TEST(CompatManifestsTest, EachDecodesAsItsHeaderSaysAndEveryKindHasFiveShapes) {
  std::map<std::string, int> documents_per_kind;
  int files = 0;
  for (const fs::directory_entry& project : fs::directory_iterator(CompatDir())) {
    for (const fs::directory_entry& e : fs::directory_iterator(project.path())) {
      if (e.path().extension() != ".yaml") continue;
      ++files;
      std::ifstream in(e.path());
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::string name = project.path().filename().string() + "/" + e.path().filename().string();
      std::vector<std::string> warnings;
      Result<std::vector<Object>> decoded = DecodeManifests({{name, text}}, &warnings);
      ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
      EXPECT_EQ(static_cast<int>(decoded->size()), Declared(text, "objects")) << name;
      std::string all;
      for (const std::string& w : warnings) all += w + "\n";
      EXPECT_EQ(static_cast<int>(warnings.size()), Declared(text, "warnings")) << name << "\n"
                                                                               << all;
      Result<std::vector<YamlDocument>> docs = ParseYamlDocuments(text);
      ASSERT_TRUE(docs.has_value());
      for (const YamlDocument& d : *docs) {
        ++documents_per_kind[d.value.value("apiVersion", "")
                                 .substr(0, d.value.value("apiVersion", "").find('/')) +
                             " " + d.value.value("kind", "")];
      }
    }
  }
  EXPECT_GE(files, 10);
  for (const auto& [kind, count] : documents_per_kind) {
    EXPECT_GE(count, 5) << kind << " has " << count << " documents; every kind needs five shapes";
  }
}

}  // namespace
}  // namespace strata::api
