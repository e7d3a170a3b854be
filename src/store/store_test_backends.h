#pragma once

// The backends that the shared Store behaviour tests run against, and a scratch directory for
// the ones that keep files. Test-only.

#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "store/sqlite_store.h"
#include "store/store.h"

namespace strata::store {

struct StoreBackend {
  std::string name;
  // Opens a store over `dir` (a fresh, empty directory that the backend may use).
  std::function<Result<std::unique_ptr<Store>>(const StoreOptions&, const std::string& dir)> open;

  friend void PrintTo(const StoreBackend& backend, std::ostream* out) { *out << backend.name; }
};

inline std::vector<StoreBackend> AllStoreBackends() {
  return {
      {"Memory",
       [](const StoreOptions& options, const std::string&) -> Result<std::unique_ptr<Store>> {
         return NewMemoryStore(options);
       }},
      {"Sqlite",
       [](const StoreOptions& options, const std::string& dir) {
         return OpenSqliteStore(dir, options, SqliteDurability::kProcessCrash);
       }},
  };
}

// A new empty directory under the system's temporary directory.
inline std::string MakeTempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "strata-store-XXXXXX").string();
  char* made = mkdtemp(pattern.data());
  return made ? std::string(made) : std::string();
}

}  // namespace strata::store
