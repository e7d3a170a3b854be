#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cache.h"
#include "common/clock.h"
#include "controller/control_loop.h"
#include "store/fault_injecting_store.h"
#include "store/store.h"

// The crash-between-writes harness: a scenario of control loops and the world around them (the
// node agents' part, a user's edits) is run once without faults, counting the loops' writes;
// then once for every N up to that count with the process dying at the Nth write (every later
// write lost), restarted on the same store with fresh loops, and run on. Every run must end in
// the fault-free run's end state. Test-only.
namespace strata::controller::testing {

// The loops of one process, reading one cache over `store` (the faulty one).
struct Process {
  std::unique_ptr<cluster::Cache> cache;
  std::vector<std::unique_ptr<ControlLoop>> loops;
};

struct CrashScenario {
  std::string name;
  // The objects there before the run, written to the store underneath.
  std::function<void(store::Store& store, FakeClock& clock)> setup;
  // A fresh process: its cache and loops, over `store` (the faults' store).
  std::function<Process(store::Store& store, FakeClock& clock)> start;
  // What the world does after the loops' pass `pass` (written to the store underneath, which no
  // fault touches): agents start and finish pods, a user edits a spec.
  std::function<void(store::Store& store, FakeClock& clock, int pass)> world;
  // Passes until the fault-free run is settled; runs after a restart get more.
  int passes = 30;
  // Time between passes.
  Duration step = std::chrono::seconds(1);
};

// What the run left, comparable across runs: every object but Events, as text, with the store's
// bookkeeping (uid, resourceVersion, creationTimestamp), every timestamp and every measurement
// of elapsed time (a service's measured cold start, which a crash lengthens) blanked.
std::string EndState(const store::Store& store);

struct CrashRun {
  std::string end_state;
  int64_t writes = 0;  // the loops' writes (through the faulty store)
  bool died = false;   // the fault fired
};

// Runs the scenario on a fresh memory store; with `die_at` > 0, the process dies at that write
// and is restarted.
CrashRun RunScenario(const CrashScenario& scenario, int64_t die_at);

// Runs the scenario on a SQLite store in `dir` with the first process forked and killed for real
// (_exit) at write `die_at`; the test process restarts the loops on the same file and runs on.
CrashRun RunScenarioWithRealExit(const CrashScenario& scenario, int64_t die_at,
                                 const std::string& dir);

}  // namespace strata::controller::testing
