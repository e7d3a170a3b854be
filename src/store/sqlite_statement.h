#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"

// The small layer over SQLite's C API that strata's SQLite files share: the store's file
// (sqlite_store.cc) and the cost ledger's (observe/cost_ledger.cc).

namespace strata::store {

// One prepared statement; finalized when destroyed. Move-only. Not thread-safe: used under the
// lock of the connection that prepared it.
class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* statement) : db_(db), statement_(statement) {}
  Statement(Statement&& other) noexcept
      : db_(other.db_), statement_(std::exchange(other.statement_, nullptr)) {}
  Statement& operator=(Statement&&) = delete;
  ~Statement() { sqlite3_finalize(statement_); }

  void Bind(int index, int64_t value) { sqlite3_bind_int64(statement_, index, value); }
  void Bind(int index, double value) { sqlite3_bind_double(statement_, index, value); }
  void Bind(int index, std::string_view value) {
    sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()),
                      SQLITE_TRANSIENT);
  }
  void BindNull(int index) { sqlite3_bind_null(statement_, index); }

  // Runs a statement that returns no rows.
  Status Run(std::string_view what) {
    int rc = sqlite3_step(statement_);
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
    if (rc != SQLITE_DONE) return Failed(what);
    return Status::Ok();
  }

  // Steps to the next row: true for a row, false at the end; an error otherwise.
  Result<bool> Step(std::string_view what) {
    int rc = sqlite3_step(statement_);
    if (rc == SQLITE_ROW) return true;
    sqlite3_reset(statement_);
    if (rc == SQLITE_DONE) return false;
    return Err(Failed(what));
  }

  // Ends a query before its last row, so that the statement can be bound and run again.
  void Reset() {
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
  }

  int64_t Int(int column) const { return sqlite3_column_int64(statement_, column); }
  double Double(int column) const { return sqlite3_column_double(statement_, column); }
  bool IsNull(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }
  std::string Text(int column) const {
    const unsigned char* text = sqlite3_column_text(statement_, column);
    return text ? std::string(reinterpret_cast<const char*>(text),
                              sqlite3_column_bytes(statement_, column))
                : std::string();
  }

 private:
  Status Failed(std::string_view what) const {
    return InternalError("sqlite: " + std::string(what) + ": " + sqlite3_errmsg(db_));
  }

  sqlite3* db_;
  sqlite3_stmt* statement_;
};

}  // namespace strata::store
