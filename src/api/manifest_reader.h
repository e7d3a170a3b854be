#pragma once

#include <istream>
#include <string>
#include <vector>

#include "api/manifest.h"
#include "common/status.h"

namespace strata::api {

// Reads the manifests `strata apply -f PATH` names: a file; a directory, whose *.yaml, *.yml
// and *.json files are read recursively in sorted path order; or "-", which reads `stdin`
// (named "<stdin>"). Source names are the paths as reached from PATH. Returns kInvalidArgument
// naming the path when it does not exist or cannot be read, or when a directory holds no
// manifest. Reads the file system; not for hot paths.
Result<std::vector<ManifestSource>> ReadManifestSources(const std::string& path,
                                                        std::istream& stdin_stream);

}  // namespace strata::api
