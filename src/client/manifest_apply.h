#pragma once

#include <ostream>
#include <vector>

#include "api/manifest.h"
#include "client/api_client.h"
#include "common/status.h"

namespace strata::client {

// `strata apply -f` against a server: sends `objects` (decoded by the caller, so errors name the
// file, document and field, exactly as `--dry-run` does) to the server's apply endpoint in one
// request, which writes them one at a time in order. Writes one line per object to `out`:
// "job.strata.dev/resnet50-train created" (configured, unchanged; "(server dry run)" appended
// with `dry_run`). Returns the server's Status, which names the documents applied before a
// failed one.
Status ApplyManifests(ApiClient& client, const std::vector<api::Object>& objects, bool dry_run,
                      std::ostream& out);

}  // namespace strata::client
