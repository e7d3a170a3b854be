#include "api/manifest_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

namespace strata::api {
namespace {

namespace fs = std::filesystem;

bool IsManifestFile(const fs::path& path) {
  std::string ext = path.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

Result<ManifestSource> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Err(InvalidArgumentError(path.string() + ": cannot be read"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Err(InvalidArgumentError(path.string() + ": read failed"));
  return ManifestSource{path.string(), std::move(text)};
}

}  // namespace

Result<std::vector<ManifestSource>> ReadManifestSources(const std::string& path,
                                                        std::istream& stdin_stream) {
  if (path == "-") {
    std::ostringstream text;
    text << stdin_stream.rdbuf();
    return std::vector<ManifestSource>{{"<stdin>", text.str()}};
  }
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    return Err(InvalidArgumentError(path + ": no such file or directory"));
  }
  if (!fs::is_directory(status)) {
    ASSIGN_OR_RETURN(ManifestSource source, ReadFile(path));
    return std::vector<ManifestSource>{std::move(source)};
  }
  std::vector<fs::path> files;
  fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && IsManifestFile(it->path())) files.push_back(it->path());
  }
  if (ec) return Err(InvalidArgumentError(path + ": " + ec.message()));
  if (files.empty()) {
    return Err(InvalidArgumentError(path + ": no *.yaml, *.yml or *.json files in the directory"));
  }
  std::sort(files.begin(), files.end());
  std::vector<ManifestSource> sources;
  for (const fs::path& file : files) {
    ASSIGN_OR_RETURN(ManifestSource source, ReadFile(file));
    sources.push_back(std::move(source));
  }
  return sources;
}

}  // namespace strata::api
