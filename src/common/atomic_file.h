#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "common/status.h"

namespace strata {

// Whether a replaced file must survive a crash of the machine.
enum class FileSync {
  kDurable,  // the file and its directory are synced: the new file survives a crash
  kNone,     // neither: for a file rewritten often that a crash makes worthless anyway
};

// Replaces the file at `path` with `text` whole, or leaves it as it was: the text goes to
// `path`.tmp with exactly the permissions `mode` (whatever the umask), is synced to disk (as
// `sync` says), then renamed over `path`, and the directory is synced so that the rename
// survives a crash. A reader sees the old file or the new one, never a part. Returns
// Unavailable naming the path and the reason otherwise.
Status ReplaceFileAtomically(const std::string& path, std::string_view text, mode_t mode,
                             FileSync sync = FileSync::kDurable);

}  // namespace strata
