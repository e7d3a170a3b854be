#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "observe/cost.h"

// The durable cost ledger: what the cluster's allocations cost, kept as pods run, so that a
// report over a window is the same before and after the pods are deleted and after the control
// plane restarts (a kill -9 included). It is not an API object: a SQLite file of its own in the
// data dir (kCostLedgerFileName, readable by its owner only), owned by the control plane.
//
// Model (OpenCost's, as cost.h): an allocation is charged its requests x price x time held.
//
// Records. One row per pod allocation interval: the pod's uid, namespace/name, the values of
// the dimensions when it was bound (the team and project labels, the queue, job and service;
// later label changes do not move past spend), its GPU model and GPUs, CPU cores and memory,
// the unit prices charged, its start (the pod's bound-at) and its end, or none while it runs.
// Sync opens a record when it first sees a bound pod and closes it when the pod ends (at the
// pod's own finish time) or is gone from the cluster (at the time the ledger saw it go: the Sync
// that no longer finds it; for the first Sync after Open, the last time the ledger saw the
// cluster before it stopped, so a control plane down for an hour does not charge pods deleted
// before it went down for that hour). An open record accrues without writes: its cost up to now
// is computed at read time.
//
// Recovery. The file is SQLite in WAL mode: every Sync is one transaction, so a process killed
// at any point leaves the last Sync's state. The first Sync after Open reconciles with the pods
// that exist: open records of pods now gone are closed as above, records of pods that ended
// while it was down are closed at their finish time, and pods bound while it was down get
// records from their bound-at.
//
// Prices. A record is charged the prices in force when it was opened (the price table given to
// Open). A price change (a new table at the next start) does not re-price the past, as in
// OpenCost: at Open, each open record whose prices differ is closed at that moment and
// continued by a new record at the new prices.
//
// Bounded size. Closed records whose end is older than `raw_retention` (8 days by default, so a
// 7-day report keeps its job and pod detail) are rolled up: their cost is split into the hours
// it fell in and added to one row per hour per (team, project, queue, service), with the
// GPU-hours, the cost of each resource and the allocations that started in the hour; their job
// and pod read back as kRolledUp. Rolled-up hours older than `rollup_retention` (400 days, more
// than the cost API's longest window) are deleted. So the raw rows are at most the allocations
// of `raw_retention` (80,000 at 10,000 pods a day: about 15 MB, as the test measures 1.8 MB per
// 10,000) plus those that run, and the rolled-up rows at most 9,600 per group; freed pages are
// reused, so the file stops growing.
//
// Thread-safe: Sync (the ledger's loop) and Read (the cost API, /metrics) may run at once.

namespace strata::observe {

// The ledger's file inside a data directory.
inline constexpr char kCostLedgerFileName[] = "cost-ledger.db";

struct CostLedgerOptions {
  Duration raw_retention = std::chrono::hours(24 * 8);
  Duration rollup_retention = std::chrono::hours(24 * 400);
  // How often Sync rolls up.
  Duration rollup_interval = std::chrono::hours(1);
  // How often a Sync that changed nothing records that it saw the cluster: pods gone while the
  // ledger was down are closed at most this long before it last saw them.
  Duration seen_interval = std::chrono::seconds(10);
};

// Row counts, for tests and the size figures.
struct CostLedgerCounts {
  int64_t open = 0;
  int64_t closed = 0;
  int64_t rolled_up_hours = 0;  // rows of (hour, team, project, queue, service)
  int64_t file_bytes = 0;       // pages in use and free, as SQLite counts them
};

class CostLedger {
 public:
  // Opens (creating if needed) the ledger at `path`, charging new records at `prices`; open
  // records at other prices are closed at `now` and continued at these (see above). Returns
  // Internal naming the path when the file cannot be opened or is not a ledger.
  static Result<std::unique_ptr<CostLedger>> Open(const std::string& path, const PriceTable& prices,
                                                  TimePoint now, CostLedgerOptions options = {});
  ~CostLedger();
  CostLedger(const CostLedger&) = delete;
  CostLedger& operator=(const CostLedger&) = delete;

  // Brings the ledger up to date with `pods`: every pod bound to a node that the cluster holds
  // now (CostPodsOf; finished ones carry their end), at `now`. Opens records for new pods,
  // closes those that ended or are gone, and rolls up when due. On an error nothing of this
  // Sync is kept; the next one tries again. REQUIRES: `now` does not go backwards.
  Status Sync(const std::vector<CostPod>& pods, TimePoint now);

  // Every allocation that held resources in [from, to): the records (the open ones with no
  // end, their prices as charged) and each rolled-up hour as one allocation over that hour
  // (holding the hour's average GPUs, cores and GiB at the hour's average prices, job and pod
  // kRolledUp), for ComputeCost and ComputeCostSeries over any window inside [from, to).
  Result<std::vector<CostPod>> Read(TimePoint from, TimePoint to) const;

  Result<CostLedgerCounts> Counts() const;

  // Tokens the services served, kept by the minute so that a service's cost per million
  // tokens survives restarts too (server::ServiceTokenLedger writes each minute's here). Adds
  // `tokens` to the minute starting at `minute`.
  Status AddServiceTokens(TimePoint minute, const std::map<std::string, double>& tokens);
  // Tokens per service in the minutes that start in [from, to).
  Result<std::map<std::string, double>> ServiceTokensBetween(TimePoint from, TimePoint to) const;

  const std::string& path() const { return path_; }

 private:
  struct OpenRecord;  // an open record: its row and what it was opened with
  struct Connection;

  CostLedger(std::string path, const PriceTable& prices, CostLedgerOptions options);

  // Reads the open records and the meta rows, and continues records at changed prices.
  Status Load(TimePoint now);
  // Rolls up the records that ended before now - raw_retention; returns how many.
  Result<int64_t> RollUp(TimePoint now);

  const std::string path_;
  const PriceTable prices_;
  const CostLedgerOptions options_;
  mutable std::mutex mutex_;  // guards everything below
  std::unique_ptr<Connection> db_;
  std::map<std::string, OpenRecord> open_;  // by pod uid
  std::set<std::string> closed_;  // uids of closed records whose pods the cluster still has
  bool first_sync_ = true;
  TimePoint last_seen_{};     // the last Sync recorded (kept in the file)
  TimePoint rolled_until_{};  // records that ended before this were rolled up
  TimePoint last_rollup_{};
};

}  // namespace strata::observe
