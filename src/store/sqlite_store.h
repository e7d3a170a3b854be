#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "store/store.h"

namespace strata::store {

// What an acknowledged write survives. Both run SQLite in WAL mode; they differ in SQLite's
// `synchronous` setting.
enum class SqliteDurability {
  // synchronous=NORMAL: a commit is written to the WAL file (the OS page cache) before it is
  // acknowledged, so it survives the death of the process (kill -9, a crash, the OOM killer).
  // A power loss or kernel crash may lose the last commits, never corrupt the file.
  kProcessCrash,
  // synchronous=FULL: the WAL is also fsynced on every commit, so an acknowledged write
  // survives a power loss too, at the price of one fsync per commit (a batch Apply pays one).
  kPowerLoss,
};

// The file name of the store inside a data directory.
inline constexpr char kSqliteStoreFileName[] = "strata.db";

// Opens (creating if needed) the store kept in `data_dir`/strata.db, and holds an exclusive lock
// on the directory while it is open: a second process gets FailedPrecondition instead of a
// store that diverges. Objects and the kept history are read into memory at open, reads are
// served from there, and every write is committed to SQLite (one transaction per Apply) before
// it is applied and acknowledged; watch-from-version keeps working across restarts.
//
// Returns FailedPrecondition for a directory in use or a file with another schema version,
// Internal for a file that is not a strata store (an empty one too) or cannot be read, naming
// the path.
Result<std::unique_ptr<Store>> OpenSqliteStore(
    const std::string& data_dir, const StoreOptions& options,
    SqliteDurability durability = SqliteDurability::kPowerLoss);

}  // namespace strata::store
