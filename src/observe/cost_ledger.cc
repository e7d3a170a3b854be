#include "observe/cost_ledger.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <tuple>

#include "store/sqlite_statement.h"

namespace strata::observe {
namespace {

using store::Statement;

constexpr int64_t kSchemaVersion = 1;
constexpr int kBusyTimeoutMs = 5000;
constexpr Duration kHour = std::chrono::hours(1);

constexpr char kCreateSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS allocations (
  id INTEGER PRIMARY KEY, uid TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
  team TEXT NOT NULL, project TEXT NOT NULL, queue TEXT NOT NULL, job TEXT NOT NULL,
  service TEXT NOT NULL, gpu_model TEXT NOT NULL, gpus REAL NOT NULL, cpu_cores REAL NOT NULL,
  memory_gib REAL NOT NULL, gpu_hour REAL NOT NULL, cpu_core_hour REAL NOT NULL,
  memory_gib_hour REAL NOT NULL, gpu_priced INTEGER NOT NULL, start_ns INTEGER NOT NULL,
  end_ns INTEGER);
CREATE INDEX IF NOT EXISTS allocations_by_uid ON allocations (uid);
CREATE INDEX IF NOT EXISTS allocations_by_end ON allocations (end_ns);
CREATE TABLE IF NOT EXISTS hours (
  hour_ns INTEGER NOT NULL, team TEXT NOT NULL, project TEXT NOT NULL, queue TEXT NOT NULL,
  service TEXT NOT NULL, gpu_hours REAL NOT NULL, gpu_cost REAL NOT NULL,
  cpu_core_hours REAL NOT NULL, cpu_cost REAL NOT NULL, memory_gib_hours REAL NOT NULL,
  memory_cost REAL NOT NULL, pods INTEGER NOT NULL,
  PRIMARY KEY (hour_ns, team, project, queue, service)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS service_tokens (
  minute_ns INTEGER NOT NULL, service TEXT NOT NULL, tokens REAL NOT NULL,
  PRIMARY KEY (minute_ns, service)) WITHOUT ROWID;
)sql";

constexpr char kRecordColumns[] =
    "uid, namespace, name, team, project, queue, job, service, gpu_model, gpus, cpu_cores, "
    "memory_gib, gpu_hour, cpu_core_hour, memory_gib_hour, gpu_priced, start_ns, end_ns";

int64_t Nanos(TimePoint at) { return at.time_since_epoch().count(); }
TimePoint At(int64_t nanos) { return TimePoint(Duration(nanos)); }

std::string Label(const CostPod& pod, const char* key) {
  auto it = pod.labels.find(key);
  return it == pod.labels.end() ? std::string() : it->second;
}

// The names of the meta rows.
constexpr char kSchemaRow[] = "schema";
constexpr char kLastSeenRow[] = "last_seen_ns";
constexpr char kRolledUntilRow[] = "rolled_until_ns";
constexpr char kLastRollupRow[] = "last_rollup_ns";

// One rolled-up hour of one group, as it is added up.
struct HourTotals {
  double gpu_hours = 0, gpu_cost = 0, cpu_core_hours = 0, cpu_cost = 0, memory_gib_hours = 0,
         memory_cost = 0;
  int64_t pods = 0;
};

}  // namespace

struct CostLedger::OpenRecord {
  int64_t id = 0;
  TimePoint start{};
  std::string gpu_model;
  UnitPrices prices;
};

// The file and its prepared statements. Used under the ledger's mutex.
struct CostLedger::Connection {
  enum Id { kBegin, kCommit, kRollback, kInsert, kClose, kHasUid, kSetMeta, kContinue, kCount };

  ~Connection() {
    statements.clear();
    sqlite3_close_v2(db);
  }

  Status Execute(const char* sql) {
    char* message = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
      std::string text = message ? message : sqlite3_errmsg(db);
      sqlite3_free(message);
      return InternalError(path + ": " + text);
    }
    return Status::Ok();
  }

  Result<Statement> Prepare(std::string_view sql) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &statement, nullptr) !=
        SQLITE_OK) {
      return Err(InternalError(path + ": cannot prepare \"" + std::string(sql) +
                               "\": " + sqlite3_errmsg(db)));
    }
    return Statement(db, statement);
  }

  Statement& operator[](Id id) { return statements[id]; }

  Status SetMeta(const char* name, int64_t value) {
    Statement& set = statements[kSetMeta];
    set.Bind(1, std::string_view(name));
    set.Bind(2, value);
    return set.Run("write the ledger's meta");
  }

  Result<std::optional<int64_t>> Meta(const char* name) {
    ASSIGN_OR_RETURN(Statement select, Prepare("SELECT value FROM meta WHERE name = ?"));
    select.Bind(1, std::string_view(name));
    ASSIGN_OR_RETURN(bool found, select.Step("read the ledger's meta"));
    if (!found) return std::optional<int64_t>();
    return std::optional<int64_t>(select.Int(0));
  }

  // Runs `body` (returning a Result) in one transaction: committed when it succeeds, rolled
  // back otherwise.
  template <typename Body>
  Status Transaction(Body body) {
    if (Status begun = statements[kBegin].Run("begin"); !begun.ok()) return begun;
    auto done = body();
    Status status = done ? statements[kCommit].Run("commit") : done.error();
    if (!status.ok()) statements[kRollback].Run("roll back").IgnoreError();
    return status;
  }

  std::string path;
  sqlite3* db = nullptr;
  std::vector<Statement> statements;
};

CostLedger::CostLedger(std::string path, const PriceTable& prices, CostLedgerOptions options)
    : path_(std::move(path)), prices_(prices), options_(options) {}

CostLedger::~CostLedger() = default;

Result<std::unique_ptr<CostLedger>> CostLedger::Open(const std::string& path,
                                                     const PriceTable& prices, TimePoint now,
                                                     CostLedgerOptions options) {
  std::unique_ptr<CostLedger> ledger(new CostLedger(path, prices, options));
  auto db = std::make_unique<Connection>();
  db->path = path;
  std::error_code error;
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  // Who spent what is the admin's: the file is its owner's only, and SQLite gives its WAL and
  // shared-memory files the same mode.
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 || fchmod(fd, 0600) != 0) {
    std::string why = std::strerror(errno);
    if (fd >= 0) close(fd);
    return Err(InternalError("cost ledger " + path + ": cannot open: " + why));
  }
  close(fd);
  if (sqlite3_open_v2(path.c_str(), &db->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    return Err(InternalError("cost ledger " + path + ": cannot open: " + sqlite3_errmsg(db->db)));
  }
  sqlite3_busy_timeout(db->db, kBusyTimeoutMs);
  // WAL: a commit appends to the log, so a process killed mid-Sync leaves the last Sync whole.
  RETURN_IF_ERROR(db->Execute("PRAGMA journal_mode=WAL"));
  RETURN_IF_ERROR(db->Execute("PRAGMA synchronous=NORMAL"));
  Status schema = db->Execute(kCreateSchema);
  if (!schema.ok()) {
    return Err(InternalError("cost ledger " + path + " is not a strata cost ledger (" +
                             schema.message() + ")"));
  }
  const std::string placeholders = "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?";
  const std::string sql[Connection::kCount] = {
      "BEGIN IMMEDIATE",
      "COMMIT",
      "ROLLBACK",
      std::string("INSERT INTO allocations (") + kRecordColumns + ") VALUES (" + placeholders + ")",
      "UPDATE allocations SET end_ns = ? WHERE id = ?",
      "SELECT 1 FROM allocations WHERE uid = ? LIMIT 1",
      "INSERT INTO meta (name, value) VALUES (?, ?) "
      "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
      // A record continued at new prices: the same pod from `start_ns`.
      "INSERT INTO allocations (uid, namespace, name, team, project, queue, job, service, "
      "gpu_model, gpus, cpu_cores, memory_gib, gpu_hour, cpu_core_hour, memory_gib_hour, "
      "gpu_priced, start_ns, end_ns) SELECT uid, namespace, name, team, project, queue, job, "
      "service, gpu_model, gpus, cpu_cores, memory_gib, ?, ?, ?, ?, ?, NULL FROM allocations "
      "WHERE id = ?",
  };
  for (const std::string& text : sql) {
    ASSIGN_OR_RETURN(Statement statement, db->Prepare(text));
    db->statements.push_back(std::move(statement));
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> version, db->Meta(kSchemaRow));
  if (version && *version != kSchemaVersion) {
    return Err(InternalError("cost ledger " + path + " has schema version " +
                             std::to_string(*version) + "; this strata reads " +
                             std::to_string(kSchemaVersion)));
  }
  if (!version) RETURN_IF_ERROR(db->SetMeta(kSchemaRow, kSchemaVersion));
  ledger->db_ = std::move(db);
  std::lock_guard lock(ledger->mutex_);
  RETURN_IF_ERROR(ledger->Load(now));
  return ledger;
}

Status CostLedger::Load(TimePoint now) {
  open_.clear();
  closed_.clear();
  Result<bool> read = [&]() -> Result<bool> {
    ASSIGN_OR_RETURN(std::optional<int64_t> seen, db_->Meta(kLastSeenRow));
    ASSIGN_OR_RETURN(std::optional<int64_t> rolled, db_->Meta(kRolledUntilRow));
    ASSIGN_OR_RETURN(std::optional<int64_t> rollup, db_->Meta(kLastRollupRow));
    last_seen_ = seen ? At(*seen) : TimePoint{};
    rolled_until_ = rolled ? At(*rolled) : TimePoint{};
    last_rollup_ = rollup ? At(*rollup) : TimePoint{};
    ASSIGN_OR_RETURN(
        Statement select,
        db_->Prepare("SELECT id, uid, start_ns, gpu_model, gpu_hour, cpu_core_hour, "
                     "memory_gib_hour, gpu_priced FROM allocations WHERE end_ns IS NULL"));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, select.Step("read the open records"));
      if (!row) break;
      OpenRecord record;
      record.id = select.Int(0);
      record.start = At(select.Int(2));
      record.gpu_model = select.Text(3);
      record.prices = {select.Double(4), select.Double(5), select.Double(6), select.Int(7) != 0};
      open_[select.Text(1)] = std::move(record);
    }
    return true;
  }();
  if (!read) return read.error();
  // A record is charged the prices in force when it was opened: continue those opened at other
  // prices with a record at the current ones, from now on.
  return db_->Transaction([&]() -> Result<bool> {
    for (auto& [uid, record] : open_) {
      UnitPrices current = PricesFor(prices_, record.gpu_model);
      if (current == record.prices) continue;
      TimePoint from = std::max(record.start, now);
      Statement& close = (*db_)[Connection::kClose];
      close.Bind(1, Nanos(from));
      close.Bind(2, record.id);
      RETURN_IF_ERROR(close.Run("close a record at the old prices"));
      Statement& next = (*db_)[Connection::kContinue];
      next.Bind(1, current.gpu_hour);
      next.Bind(2, current.cpu_core_hour);
      next.Bind(3, current.memory_gib_hour);
      next.Bind(4, static_cast<int64_t>(current.gpu_priced));
      next.Bind(5, Nanos(from));
      next.Bind(6, record.id);
      RETURN_IF_ERROR(next.Run("continue a record at the new prices"));
      record.id = sqlite3_last_insert_rowid(db_->db);
      record.start = from;
      record.prices = current;
    }
    return true;
  });
}

Status CostLedger::Sync(const std::vector<CostPod>& pods, TimePoint now) {
  std::lock_guard lock(mutex_);
  // Pods gone from the cluster were last seen now, except on the first Sync after a restart:
  // then they went while the ledger was down, after the last time it saw them.
  const TimePoint gone_at = first_sync_ && last_seen_ != TimePoint{} ? last_seen_ : now;
  bool wrote = false;
  bool seen = false;
  Status status = db_->Transaction([&]() -> Result<bool> {
    auto close = [&](OpenRecord& record, TimePoint end) -> Status {
      Statement& statement = (*db_)[Connection::kClose];
      statement.Bind(1, Nanos(std::max(end, record.start)));
      statement.Bind(2, record.id);
      wrote = true;
      return statement.Run("close a record");
    };
    auto has_record = [&](const std::string& uid) -> Result<bool> {
      Statement& statement = (*db_)[Connection::kHasUid];
      statement.Bind(1, std::string_view(uid));
      ASSIGN_OR_RETURN(bool found, statement.Step("look a record up"));
      if (found) statement.Reset();
      return found;
    };
    auto insert = [&](const CostPod& pod) -> Status {
      UnitPrices prices = PricesFor(prices_, pod.gpus > 0 ? pod.gpu_model : "");
      Statement& statement = (*db_)[Connection::kInsert];
      int column = 1;
      for (const std::string& text :
           {pod.uid, pod.namespace_name, pod.name, Label(pod, "team"), Label(pod, "project"),
            pod.queue, pod.job, pod.service, pod.gpus > 0 ? pod.gpu_model : std::string()}) {
        statement.Bind(column++, std::string_view(text));
      }
      for (double value : {pod.gpus, pod.cpu_cores, pod.memory_gib, prices.gpu_hour,
                           prices.cpu_core_hour, prices.memory_gib_hour}) {
        statement.Bind(column++, value);
      }
      statement.Bind(column++, static_cast<int64_t>(prices.gpu_priced));
      statement.Bind(column++, Nanos(pod.start));
      if (pod.end) {
        statement.Bind(column++, Nanos(std::max(*pod.end, pod.start)));
      } else {
        statement.BindNull(column++);
      }
      wrote = true;
      if (Status run = statement.Run("open a record"); !run.ok()) return run;
      if (!pod.end) {
        open_[pod.uid] = {sqlite3_last_insert_rowid(db_->db), pod.start,
                          pod.gpus > 0 ? pod.gpu_model : "", prices};
      }
      return Status::Ok();
    };

    std::set<std::string> present;
    for (const CostPod& pod : pods) {
      present.insert(pod.uid);
      auto open = open_.find(pod.uid);
      if (open != open_.end()) {
        if (pod.end) {
          RETURN_IF_ERROR(close(open->second, *pod.end));
          open_.erase(open);
          closed_.insert(pod.uid);
          continue;
        }
        // Still held; a record continued at new prices starts after the pod was bound.
        if (open->second.start >= pod.start) continue;
        // Bound anew since (a new bound-at): the old allocation ended there.
        RETURN_IF_ERROR(close(open->second, pod.start));
        open_.erase(open);
      }
      if (closed_.count(pod.uid) > 0) continue;
      if (pod.end) {
        // Ended while the ledger was down, or before it existed: recorded whole, unless it
        // ended before the rolled-up past (its record, if any, is in the hours already).
        closed_.insert(pod.uid);
        if (*pod.end < rolled_until_) continue;
        ASSIGN_OR_RETURN(bool known, has_record(pod.uid));
        if (known) continue;
      }
      RETURN_IF_ERROR(insert(pod));
    }
    for (auto it = open_.begin(); it != open_.end();) {
      if (present.count(it->first) > 0) {
        ++it;
        continue;
      }
      RETURN_IF_ERROR(close(it->second, gone_at));
      it = open_.erase(it);
    }
    for (auto it = closed_.begin(); it != closed_.end();) {
      it = present.count(*it) > 0 ? std::next(it) : closed_.erase(it);
    }
    seen = wrote || first_sync_ || now - last_seen_ >= options_.seen_interval;
    if (seen) {
      RETURN_IF_ERROR(db_->SetMeta(kLastSeenRow, Nanos(now)));
    }
    if (now - last_rollup_ >= options_.rollup_interval) {
      ASSIGN_OR_RETURN(int64_t rolled, RollUp(now));
      wrote = wrote || rolled > 0;
    }
    return wrote;
  });
  if (!status.ok()) {
    // The transaction rolled back: the records in memory follow the file again.
    Status reloaded = Load(now);
    if (!reloaded.ok()) return reloaded;
    return status;
  }
  if (seen) last_seen_ = now;
  first_sync_ = false;
  return Status::Ok();
}

// REQUIRES: mutex_ held, inside Sync's transaction.
Result<int64_t> CostLedger::RollUp(TimePoint now) {
  const TimePoint cutoff = now - options_.raw_retention;
  ASSIGN_OR_RETURN(Statement select,
                   db_->Prepare("SELECT team, project, queue, service, gpus, cpu_cores, "
                                "memory_gib, gpu_hour, cpu_core_hour, memory_gib_hour, start_ns, "
                                "end_ns FROM allocations WHERE end_ns < ?"));
  select.Bind(1, Nanos(cutoff));
  using Key = std::tuple<int64_t, std::string, std::string, std::string, std::string>;
  std::map<Key, HourTotals> hours;
  int64_t records = 0;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, select.Step("read the records to roll up"));
    if (!row) break;
    ++records;
    const double gpus = select.Double(4), cores = select.Double(5), gib = select.Double(6);
    const double gpu_price = select.Double(7), cpu_price = select.Double(8),
                 memory_price = select.Double(9);
    const TimePoint start = At(select.Int(10)), end = At(select.Int(11));
    for (TimePoint hour = StepStart(start, kHour); hour < end; hour += kHour) {
      const double held = std::chrono::duration<double, std::ratio<3600>>(
                              std::min(end, hour + kHour) - std::max(start, hour))
                              .count();
      HourTotals& totals =
          hours[{Nanos(hour), select.Text(0), select.Text(1), select.Text(2), select.Text(3)}];
      totals.gpu_hours += gpus * held;
      totals.gpu_cost += gpus * held * gpu_price;
      totals.cpu_core_hours += cores * held;
      totals.cpu_cost += cores * held * cpu_price;
      totals.memory_gib_hours += gib * held;
      totals.memory_cost += gib * held * memory_price;
      if (hour <= start) ++totals.pods;
    }
  }
  ASSIGN_OR_RETURN(
      Statement add,
      db_->Prepare("INSERT INTO hours (hour_ns, team, project, queue, service, gpu_hours, "
                   "gpu_cost, cpu_core_hours, cpu_cost, memory_gib_hours, memory_cost, pods) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
                   "gpu_hours = gpu_hours + excluded.gpu_hours, "
                   "gpu_cost = gpu_cost + excluded.gpu_cost, "
                   "cpu_core_hours = cpu_core_hours + excluded.cpu_core_hours, "
                   "cpu_cost = cpu_cost + excluded.cpu_cost, "
                   "memory_gib_hours = memory_gib_hours + excluded.memory_gib_hours, "
                   "memory_cost = memory_cost + excluded.memory_cost, "
                   "pods = pods + excluded.pods"));
  for (const auto& [key, totals] : hours) {
    add.Bind(1, std::get<0>(key));
    add.Bind(2, std::string_view(std::get<1>(key)));
    add.Bind(3, std::string_view(std::get<2>(key)));
    add.Bind(4, std::string_view(std::get<3>(key)));
    add.Bind(5, std::string_view(std::get<4>(key)));
    int column = 6;
    for (double value : {totals.gpu_hours, totals.gpu_cost, totals.cpu_core_hours, totals.cpu_cost,
                         totals.memory_gib_hours, totals.memory_cost}) {
      add.Bind(column++, value);
    }
    add.Bind(column, totals.pods);
    RETURN_IF_ERROR(add.Run("add a rolled-up hour"));
  }
  ASSIGN_OR_RETURN(Statement remove, db_->Prepare("DELETE FROM allocations WHERE end_ns < ?"));
  remove.Bind(1, Nanos(cutoff));
  RETURN_IF_ERROR(remove.Run("remove the rolled-up records"));
  ASSIGN_OR_RETURN(Statement expire, db_->Prepare("DELETE FROM hours WHERE hour_ns < ?"));
  expire.Bind(1, Nanos(now - options_.rollup_retention));
  RETURN_IF_ERROR(expire.Run("remove the expired hours"));
  ASSIGN_OR_RETURN(Statement expire_tokens,
                   db_->Prepare("DELETE FROM service_tokens WHERE minute_ns < ?"));
  expire_tokens.Bind(1, Nanos(now - options_.rollup_retention));
  RETURN_IF_ERROR(expire_tokens.Run("remove the expired token counts"));
  rolled_until_ = std::max(rolled_until_, cutoff);
  last_rollup_ = now;
  RETURN_IF_ERROR(db_->SetMeta(kRolledUntilRow, Nanos(rolled_until_)));
  RETURN_IF_ERROR(db_->SetMeta(kLastRollupRow, Nanos(now)));
  return records;
}

Result<std::vector<CostPod>> CostLedger::Read(TimePoint from, TimePoint to) const {
  std::lock_guard lock(mutex_);
  std::vector<CostPod> out;
  ASSIGN_OR_RETURN(Statement records, db_->Prepare(std::string("SELECT ") + kRecordColumns +
                                                   " FROM allocations WHERE start_ns < ? AND "
                                                   "(end_ns IS NULL OR end_ns > ?) ORDER BY id"));
  records.Bind(1, Nanos(to));
  records.Bind(2, Nanos(from));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, records.Step("read the records"));
    if (!row) break;
    CostPod pod;
    pod.uid = records.Text(0);
    pod.namespace_name = records.Text(1);
    pod.name = records.Text(2);
    if (std::string team = records.Text(3); !team.empty()) pod.labels["team"] = team;
    if (std::string project = records.Text(4); !project.empty()) pod.labels["project"] = project;
    pod.queue = records.Text(5);
    pod.job = records.Text(6);
    pod.service = records.Text(7);
    pod.gpu_model = records.Text(8);
    pod.gpus = records.Double(9);
    pod.cpu_cores = records.Double(10);
    pod.memory_gib = records.Double(11);
    pod.prices = {records.Double(12), records.Double(13), records.Double(14), records.Int(15) != 0};
    pod.start = At(records.Int(16));
    if (!records.IsNull(17)) pod.end = At(records.Int(17));
    out.push_back(std::move(pod));
  }
  ASSIGN_OR_RETURN(Statement hours,
                   db_->Prepare("SELECT hour_ns, team, project, queue, service, gpu_hours, "
                                "gpu_cost, cpu_core_hours, cpu_cost, memory_gib_hours, "
                                "memory_cost, pods FROM hours WHERE hour_ns < ? AND hour_ns > ? "
                                "ORDER BY hour_ns"));
  hours.Bind(1, Nanos(to));
  hours.Bind(2, Nanos(from - kHour));
  auto average = [](double cost, double amount) { return amount > 0 ? cost / amount : 0.0; };
  for (;;) {
    ASSIGN_OR_RETURN(bool row, hours.Step("read the rolled-up hours"));
    if (!row) break;
    CostPod pod;
    pod.uid = std::string(kRolledUp);
    pod.name = std::string(kRolledUp);
    pod.job = std::string(kRolledUp);
    if (std::string team = hours.Text(1); !team.empty()) pod.labels["team"] = team;
    if (std::string project = hours.Text(2); !project.empty()) pod.labels["project"] = project;
    pod.queue = hours.Text(3);
    pod.service = hours.Text(4);
    // Over one hour, the average held is the hours held.
    pod.gpus = hours.Double(5);
    pod.cpu_cores = hours.Double(7);
    pod.memory_gib = hours.Double(9);
    pod.prices = {average(hours.Double(6), pod.gpus), average(hours.Double(8), pod.cpu_cores),
                  average(hours.Double(10), pod.memory_gib), true};
    pod.start = At(hours.Int(0));
    pod.end = pod.start + kHour;
    pod.pods = static_cast<int>(hours.Int(11));
    out.push_back(std::move(pod));
  }
  return out;
}

Status CostLedger::AddServiceTokens(TimePoint minute, const std::map<std::string, double>& tokens) {
  std::lock_guard lock(mutex_);
  return db_->Transaction([&]() -> Result<bool> {
    ASSIGN_OR_RETURN(Statement add,
                     db_->Prepare("INSERT INTO service_tokens (minute_ns, service, tokens) "
                                  "VALUES (?, ?, ?) ON CONFLICT (minute_ns, service) DO UPDATE "
                                  "SET tokens = tokens + excluded.tokens"));
    for (const auto& [service, count] : tokens) {
      add.Bind(1, Nanos(minute));
      add.Bind(2, std::string_view(service));
      add.Bind(3, count);
      RETURN_IF_ERROR(add.Run("add a service's tokens"));
    }
    return true;
  });
}

Result<std::map<std::string, double>> CostLedger::ServiceTokensBetween(TimePoint from,
                                                                       TimePoint to) const {
  std::lock_guard lock(mutex_);
  ASSIGN_OR_RETURN(Statement select,
                   db_->Prepare("SELECT service, SUM(tokens) FROM service_tokens WHERE "
                                "minute_ns >= ? AND minute_ns < ? GROUP BY service"));
  select.Bind(1, Nanos(from));
  select.Bind(2, Nanos(to));
  std::map<std::string, double> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, select.Step("read the services' tokens"));
    if (!row) break;
    out[select.Text(0)] = select.Double(1);
  }
  return out;
}

Result<CostLedgerCounts> CostLedger::Counts() const {
  std::lock_guard lock(mutex_);
  CostLedgerCounts counts;
  auto count = [&](const char* sql) -> Result<int64_t> {
    ASSIGN_OR_RETURN(Statement statement, db_->Prepare(sql));
    ASSIGN_OR_RETURN(bool row, statement.Step("count"));
    return row ? statement.Int(0) : 0;
  };
  ASSIGN_OR_RETURN(counts.open, count("SELECT count(*) FROM allocations WHERE end_ns IS NULL"));
  ASSIGN_OR_RETURN(counts.closed,
                   count("SELECT count(*) FROM allocations WHERE end_ns IS NOT NULL"));
  ASSIGN_OR_RETURN(counts.rolled_up_hours, count("SELECT count(*) FROM hours"));
  ASSIGN_OR_RETURN(int64_t pages, count("PRAGMA page_count"));
  ASSIGN_OR_RETURN(int64_t page_size, count("PRAGMA page_size"));
  counts.file_bytes = pages * page_size;
  return counts;
}

}  // namespace strata::observe
