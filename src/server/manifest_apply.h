#pragma once

#include <ostream>
#include <vector>

#include "api/manifest.h"
#include "common/status.h"
#include "server/api_client.h"

namespace strata::server {

// `strata apply -f` against a server: decodes `sources` here first (so errors name the file,
// document and field, exactly as `--dry-run` does), then sends every object to the server's
// apply endpoint in one request, which stores all of them or none. Writes one line per object
// to `out`: "job.strata.dev/resnet50-train created" (configured, unchanged; "(server dry
// run)" appended with `dry_run`). Returns the decoding error or the server's Status.
Status ApplyManifests(ApiClient& client, const std::vector<api::ManifestSource>& sources,
                      bool dry_run, std::ostream& out);

}  // namespace strata::server
