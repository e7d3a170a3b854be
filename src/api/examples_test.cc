// Every manifest under examples/ decodes, and where a directory holds a workload in its
// compatible form and its native form (native.yaml), both decode to equal native objects.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "api/encode.h"
#include "api/manifest.h"
#include "api/manifest_reader.h"
#include "api/source_form.h"

namespace strata::api {
namespace {

namespace fs = std::filesystem;

fs::path ExamplesDir() {
  const char* root = std::getenv("STRATA_SOURCE_DIR");
  return fs::path(root != nullptr ? root : ".") / "examples";
}

Result<std::vector<Object>> DecodeFile(const fs::path& path) {
  std::istringstream no_stdin;
  ASSIGN_OR_RETURN(std::vector<ManifestSource> sources,
                   ReadManifestSources(path.string(), no_stdin));
  return DecodeManifests(sources);
}

std::string Dump(const std::vector<Object>& objects) {
  std::string out;
  for (const Object& o : objects) out += EncodeObject(o).dump(2) + "\n";
  return out;
}

// Directories of examples with manifests; examples/workers/ holds worker programs.
std::vector<fs::path> ExampleDirs() {
  std::vector<fs::path> dirs;
  for (const fs::directory_entry& e : fs::directory_iterator(ExamplesDir())) {
    if (e.is_directory() && e.path().filename() != "workers") dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

TEST(ExamplesTest, EveryExampleDecodes) {
  std::vector<fs::path> dirs = ExampleDirs();
  ASSERT_GE(dirs.size(), 6u) << ExamplesDir();
  for (const fs::path& dir : dirs) {
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) {
      std::string ext = e.path().extension().string();
      if (ext != ".yaml" && ext != ".yml" && ext != ".json") continue;
      Result<std::vector<Object>> objects = DecodeFile(e.path());
      ASSERT_TRUE(objects.has_value()) << objects.error().message();
      EXPECT_FALSE(objects->empty()) << e.path();
    }
  }
}

TEST(ExamplesTest, CompatibleAndNativeFormsDecodeEqual) {
  int pairs = 0;
  for (const fs::path& dir : ExampleDirs()) {
    if (!fs::exists(dir / "native.yaml")) continue;
    Result<std::vector<Object>> native = DecodeFile(dir / "native.yaml");
    ASSERT_TRUE(native.has_value()) << native.error().message();
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      if (e.path().filename() == "native.yaml" || e.path().extension() != ".yaml") continue;
      Result<std::vector<Object>> compatible = DecodeFile(e.path());
      ASSERT_TRUE(compatible.has_value()) << compatible.error().message();
      // The kept source says which document an object came from (api/source_form.h), not
      // what it is.
      for (Object& object : *compatible) object.metadata().annotations.erase(kSourceAnnotation);
      EXPECT_EQ(*compatible, *native) << e.path() << "\ncompatible:\n"
                                      << Dump(*compatible) << "native:\n"
                                      << Dump(*native);
      ++pairs;
    }
  }
  EXPECT_GE(pairs, 6);
}

}  // namespace
}  // namespace strata::api
