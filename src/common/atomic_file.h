#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "common/status.h"

namespace strata {

// Replaces the file at `path` with `text` whole, or leaves it as it was: the text goes to
// `path`.tmp with permissions `mode` (not widened by the umask's absence: set exactly), is
// synced to disk, then renamed over `path`. A reader sees the old file or the new one, never a
// part. Returns Unavailable naming the path and the reason otherwise.
Status ReplaceFileAtomically(const std::string& path, std::string_view text, mode_t mode);

}  // namespace strata
