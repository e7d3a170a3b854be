#include "store/sqlite_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <thread>
#include <utility>

#include "store/sqlite_statement.h"
#include "store/versioned_store.h"

namespace strata::store {
namespace {

constexpr int64_t kSchemaVersion = 1;
constexpr int kBusyTimeoutMs = 5000;

// Objects and history rows share these columns, in this order.
constexpr char kObjectColumns[] =
    "kind, namespace, name, uid, resource_version, created_ns, labels, body";
constexpr int kObjectColumnCount = 8;

constexpr char kCreateSchema[] = R"sql(
CREATE TABLE objects (
  kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL,
  resource_version INTEGER NOT NULL, created_ns INTEGER NOT NULL, labels TEXT NOT NULL,
  body TEXT NOT NULL, PRIMARY KEY (kind, namespace, name)) WITHOUT ROWID;
CREATE TABLE history (
  version INTEGER PRIMARY KEY, type INTEGER NOT NULL, previous_labels TEXT,
  kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL,
  resource_version INTEGER NOT NULL, created_ns INTEGER NOT NULL, labels TEXT NOT NULL,
  body TEXT NOT NULL);
CREATE TABLE versions (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO versions VALUES ('current', 0), ('compacted', 0);
)sql";

std::string Dump(const nlohmann::json& json) {
  // Replacing invalid UTF-8 keeps dump() from throwing on odd bytes in user strings.
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<Labels> ParseLabels(const std::string& text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return Err(InternalError("corrupt labels column: " + text));
  Labels labels;
  for (const auto& [key, value] : json.items()) {
    if (!value.is_string()) return Err(InternalError("corrupt labels column: " + text));
    labels.emplace(key, value.get<std::string>());
  }
  return labels;
}

void BindObject(Statement& statement, int first, const Object& object) {
  statement.Bind(first, object.key.kind);
  statement.Bind(first + 1, object.key.namespace_name);
  statement.Bind(first + 2, object.key.name);
  statement.Bind(first + 3, object.uid);
  statement.Bind(first + 4, object.resource_version);
  statement.Bind(first + 5,
                 static_cast<int64_t>(object.creation_timestamp.time_since_epoch().count()));
  statement.Bind(first + 6, Dump(nlohmann::json(object.labels)));
  statement.Bind(first + 7, Dump(object.body));
}

Result<Object> ReadObject(const Statement& row, int first) {
  Object object;
  object.key = {row.Text(first), row.Text(first + 1), row.Text(first + 2)};
  object.uid = row.Text(first + 3);
  object.resource_version = row.Int(first + 4);
  object.creation_timestamp = TimePoint(Duration(row.Int(first + 5)));
  ASSIGN_OR_RETURN(object.labels, ParseLabels(row.Text(first + 6)));
  object.body = nlohmann::json::parse(row.Text(first + 7), nullptr, false);
  if (!object.body.is_object()) {
    return Err(InternalError("corrupt body of " + object.key.Describe()));
  }
  return object;
}

// The durable half of the SQLite backend: one connection, used by one VersionedStore, which
// serialises every call. Not thread-safe on its own.
class SqlitePersistence final : public Persistence {
 public:
  static Result<std::unique_ptr<SqlitePersistence>> Open(const std::string& data_dir,
                                                         SqliteDurability durability);
  ~SqlitePersistence() override {
    statements_.clear();
    sqlite3_close_v2(db_);
    if (lock_fd_ >= 0) close(lock_fd_);
  }

  Result<PersistedState> Load() override;
  Status Commit(const std::vector<Change>& changes, int64_t compacted_version) override;

 private:
  enum StatementId {
    kBegin,
    kCommit,
    kRollback,
    kPutObject,
    kDeleteObject,
    kAppend,
    kPrune,
    kSetVersion,
    kStatementCount
  };

  SqlitePersistence(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}

  Status Execute(const char* sql);
  Status EnableWriteAheadLog();
  Result<Statement> Prepare(std::string_view sql);
  Status InitializeSchema();
  Status PrepareAll();
  Status WriteChanges(const std::vector<Change>& changes, int64_t compacted_version);
  Statement& Prepared(StatementId id) { return statements_[id]; }

  std::string path_;
  int lock_fd_;
  sqlite3* db_ = nullptr;
  std::vector<Statement> statements_;
};

Result<std::unique_ptr<SqlitePersistence>> SqlitePersistence::Open(const std::string& data_dir,
                                                                   SqliteDurability durability) {
  std::error_code error;
  std::filesystem::create_directories(data_dir, error);
  if (error) {
    return Err(InvalidArgumentError("data dir " + data_dir + ": " + error.message()));
  }
  std::string path = (std::filesystem::path(data_dir) / kSqliteStoreFileName).string();
  std::string lock_path = path + ".lock";
  int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) {
    return Err(InternalError("cannot open " + lock_path + ": " + std::strerror(errno)));
  }
  std::unique_ptr<SqlitePersistence> persistence(new SqlitePersistence(path, lock_fd));
  // A strata killed a moment ago can leave its lock held for a few milliseconds more: by a child
  // it was starting, between fork and exec (the descriptor is close-on-exec, not close-on-fork).
  // So a held lock is tried again for a while before the data dir is called in use.
  constexpr auto kLockPatience = std::chrono::seconds(3);
  const auto give_up = std::chrono::steady_clock::now() + kLockPatience;
  while (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK || std::chrono::steady_clock::now() >= give_up) {
      return Err(
          FailedPreconditionError("data dir " + data_dir + " is in use by another strata process"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // SQLite reads a zero-length file as a new database, so a store truncated to nothing would
  // come up as an empty cluster, silently. A store is never empty once opened: enabling WAL
  // below writes its first page.
  if (std::filesystem::file_size(path, error) == 0 && !error) {
    return Err(InternalError(path +
                             " is empty (0 bytes), not a strata store: it was truncated. "
                             "Restore it from a backup, or remove it to start an empty store"));
  }
  if (sqlite3_open_v2(path.c_str(), &persistence->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      nullptr) != SQLITE_OK) {
    return Err(InternalError("cannot open " + path + ": " + sqlite3_errmsg(persistence->db_)));
  }
  sqlite3_busy_timeout(persistence->db_, kBusyTimeoutMs);
  // WAL: a commit appends to the log, so a process killed mid-write leaves the last committed
  // state intact, and readers of the file (backups, `sqlite3`) do not block the writer.
  RETURN_IF_ERROR(persistence->EnableWriteAheadLog());
  RETURN_IF_ERROR(persistence->Execute(durability == SqliteDurability::kPowerLoss
                                           ? "PRAGMA synchronous=FULL"
                                           : "PRAGMA synchronous=NORMAL"));
  RETURN_IF_ERROR(persistence->InitializeSchema());
  RETURN_IF_ERROR(persistence->PrepareAll());
  return persistence;
}

Status SqlitePersistence::Execute(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    return InternalError(path_ + ": " + text);
  }
  return Status::Ok();
}

Status SqlitePersistence::EnableWriteAheadLog() {
  Result<Statement> pragma = Prepare("PRAGMA journal_mode=WAL");
  if (!pragma) return pragma.error();
  Result<bool> row = pragma->Step("enable WAL");
  if (!row) return row.error();
  std::string mode = *row ? pragma->Text(0) : "";
  if (mode != "wal") {
    return InternalError(path_ + ": cannot use write-ahead logging (journal mode is \"" + mode +
                         "\")");
  }
  return Status::Ok();
}

Result<Statement> SqlitePersistence::Prepare(std::string_view sql) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement, nullptr) !=
      SQLITE_OK) {
    return Err(InternalError(path_ + ": cannot prepare \"" + std::string(sql) +
                             "\": " + sqlite3_errmsg(db_)));
  }
  return Statement(db_, statement);
}

Status SqlitePersistence::InitializeSchema() {
  if (Status s = Execute("BEGIN IMMEDIATE"); !s.ok()) return s;
  auto initialize = [&]() -> Status {
    if (Status s = Execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER)"); !s.ok())
      return s;
    Result<Statement> select = Prepare("SELECT version FROM schema_version");
    if (!select) return select.error();
    Result<bool> found = select->Step("read schema version");
    if (!found) return found.error();
    if (!*found) {
      if (Status s = Execute(kCreateSchema); !s.ok()) return s;
      return Execute("INSERT INTO schema_version VALUES (1)");
    }
    if (select->Int(0) != kSchemaVersion) {
      return FailedPreconditionError(path_ + " has schema version " +
                                     std::to_string(select->Int(0)) + "; this strata reads " +
                                     std::to_string(kSchemaVersion));
    }
    return Status::Ok();
  };
  Status status = initialize();
  if (!status.ok()) {
    Execute("ROLLBACK").IgnoreError();
    return status;
  }
  return Execute("COMMIT");
}

Status SqlitePersistence::PrepareAll() {
  const std::string object_placeholders = "?, ?, ?, ?, ?, ?, ?, ?";
  const std::string sql[kStatementCount] = {
      "BEGIN IMMEDIATE",
      "COMMIT",
      "ROLLBACK",
      std::string("INSERT OR REPLACE INTO objects (") + kObjectColumns + ") VALUES (" +
          object_placeholders + ")",
      "DELETE FROM objects WHERE kind = ? AND namespace = ? AND name = ?",
      std::string("INSERT INTO history (version, type, previous_labels, ") + kObjectColumns +
          ") VALUES (?, ?, ?, " + object_placeholders + ")",
      "DELETE FROM history WHERE version <= ?",
      "UPDATE versions SET value = ? WHERE name = ?",
  };
  for (const std::string& text : sql) {
    Result<Statement> statement = Prepare(text);
    if (!statement) return statement.error();
    statements_.push_back(std::move(*statement));
  }
  return Status::Ok();
}

Result<PersistedState> SqlitePersistence::Load() {
  PersistedState state;
  ASSIGN_OR_RETURN(Statement versions, Prepare("SELECT name, value FROM versions"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, versions.Step("read versions"));
    if (!row) break;
    (versions.Text(0) == "current" ? state.current_version : state.compacted_version) =
        versions.Int(1);
  }
  ASSIGN_OR_RETURN(Statement objects,
                   Prepare(std::string("SELECT ") + kObjectColumns + " FROM objects"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, objects.Step("read objects"));
    if (!row) break;
    ASSIGN_OR_RETURN(Object object, ReadObject(objects, 0));
    state.objects.push_back(std::move(object));
  }
  ASSIGN_OR_RETURN(Statement history, Prepare(std::string("SELECT type, previous_labels, ") +
                                              kObjectColumns + " FROM history ORDER BY version"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, history.Step("read history"));
    if (!row) break;
    Change change;
    int64_t type = history.Int(0);
    if (type < 0 || type > static_cast<int64_t>(WatchEventType::kDeleted)) {
      return Err(InternalError(path_ + ": corrupt history row: type " + std::to_string(type)));
    }
    change.event.type = static_cast<WatchEventType>(type);
    if (!history.IsNull(1)) {
      ASSIGN_OR_RETURN(change.previous_labels, ParseLabels(history.Text(1)));
    }
    ASSIGN_OR_RETURN(change.event.object, ReadObject(history, 2));
    state.history.push_back(std::move(change));
  }
  return state;
}

Status SqlitePersistence::Commit(const std::vector<Change>& changes, int64_t compacted_version) {
  if (Status s = Prepared(kBegin).Run("begin"); !s.ok()) return s;
  Status status = WriteChanges(changes, compacted_version);
  if (status.ok()) status = Prepared(kCommit).Run("commit");
  // The commit's error is the one to report. Should the rollback fail too, later commits fail
  // (their BEGIN finds a transaction open) and say so; memory never sees a half-applied write.
  if (!status.ok()) Prepared(kRollback).Run("rollback").IgnoreError();
  return status;
}

Status SqlitePersistence::WriteChanges(const std::vector<Change>& changes,
                                       int64_t compacted_version) {
  for (const Change& change : changes) {
    const Object& object = change.event.object;
    if (change.event.type == WatchEventType::kDeleted) {
      Statement& remove = Prepared(kDeleteObject);
      remove.Bind(1, object.key.kind);
      remove.Bind(2, object.key.namespace_name);
      remove.Bind(3, object.key.name);
      if (Status s = remove.Run("delete object"); !s.ok()) return s;
    } else {
      Statement& put = Prepared(kPutObject);
      BindObject(put, 1, object);
      if (Status s = put.Run("write object"); !s.ok()) return s;
    }
    Statement& append = Prepared(kAppend);
    append.Bind(1, object.resource_version);
    append.Bind(2, static_cast<int64_t>(change.event.type));
    if (change.previous_labels) {
      append.Bind(3, Dump(nlohmann::json(*change.previous_labels)));
    } else {
      append.BindNull(3);
    }
    BindObject(append, 4, object);
    if (Status s = append.Run("append history"); !s.ok()) return s;
  }
  Statement& prune = Prepared(kPrune);
  prune.Bind(1, compacted_version);
  if (Status s = prune.Run("prune history"); !s.ok()) return s;
  Statement& set_version = Prepared(kSetVersion);
  set_version.Bind(1, changes.back().event.object.resource_version);
  set_version.Bind(2, std::string_view("current"));
  if (Status s = set_version.Run("write current version"); !s.ok()) return s;
  set_version.Bind(1, compacted_version);
  set_version.Bind(2, std::string_view("compacted"));
  return set_version.Run("write compacted version");
}

}  // namespace

Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& data_dir,
                                               const StoreOptions& options,
                                               SqliteDurability durability) {
  ASSIGN_OR_RETURN(std::unique_ptr<SqlitePersistence> persistence,
                   SqlitePersistence::Open(data_dir, durability));
  return VersionedStore::Open(options, std::move(persistence));
}

}  // namespace strata::store
