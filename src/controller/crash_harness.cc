#include "controller/crash_harness.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "common/check.h"
#include "store/sqlite_store.h"

namespace strata::controller::testing {
namespace {

constexpr const char* kKinds[] = {"Node",    "Queue", "ResourceFlavor", "Job",
                                  "Service", "Pod",   "Tenant"};

// Fields that measure elapsed time (a crash delays what they time), not state.
constexpr const char* kMeasurements[] = {"coldStartSeconds"};

void Blank(nlohmann::json& value, const std::set<std::string>& uids) {
  if (value.is_object()) {
    for (const char* field : kMeasurements) {
      if (value.contains(field)) value[field] = "<measured>";
    }
  }
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (ParseRfc3339(text)) {
      value = "<time>";
    } else if (uids.count(text) > 0) {
      value = "<uid>";
    }
  } else if (value.is_object() || value.is_array()) {
    for (auto& item : value) Blank(item, uids);
  }
}

// The loops' passes from `first`, with the world after each; a process that died is replaced by
// a fresh one at the end of the pass. Returns whether one died.
bool RunPasses(const CrashScenario& scenario, store::Store& base,
               store::FaultInjectingStore& faulty, FakeClock& clock, Process& process, int first,
               const std::function<void(int)>& before_pass = {}) {
  bool died = false;
  for (int pass = first; pass < 2 * scenario.passes; ++pass) {
    if (before_pass) before_pass(pass);
    for (auto& loop : process.loops) loop->RunOnce().IgnoreError();
    if (faulty.dead()) {
      died = true;
      faulty.Revive();
      // A fresh process: what the dead one held in memory is gone.
      process = Process{};
      process = scenario.start(faulty, clock);
    }
    scenario.world(base, clock, pass);
    clock.Advance(scenario.step);
  }
  return died;
}

}  // namespace

std::string EndState(const store::Store& store) {
  std::vector<store::Object> objects;
  std::set<std::string> uids;
  for (const char* kind : kKinds) {
    Result<store::ListResult> listed = store.List({kind, std::nullopt, {}});
    STRATA_CHECK(listed.has_value());
    for (store::Object& object : listed->items) {
      uids.insert(object.uid);
      objects.push_back(std::move(object));
    }
  }
  std::string out;
  for (store::Object& object : objects) {
    nlohmann::json body = object.body;
    if (body.contains("metadata")) {
      for (const char* field : {"uid", "resourceVersion", "creationTimestamp"}) {
        body["metadata"].erase(field);
      }
    }
    Blank(body, uids);
    out += object.key.Describe() + " " + body.dump() + "\n";
  }
  return out;
}

CrashRun RunScenario(const CrashScenario& scenario, int64_t die_at) {
  FakeClock clock;
  std::unique_ptr<store::Store> base = store::NewMemoryStore({&clock, 100000});
  scenario.setup(*base, clock);
  store::FaultInjectingStore faulty(*base);
  if (die_at > 0) faulty.FailAt(die_at, store::FaultInjectingStore::Fault::kDie);
  Process process = scenario.start(faulty, clock);
  CrashRun run;
  run.died = RunPasses(scenario, *base, faulty, clock, process, 0);
  run.writes = faulty.writes();
  process = Process{};
  run.end_state = EndState(*base);
  return run;
}

CrashRun RunScenarioWithRealExit(const CrashScenario& scenario, int64_t die_at,
                                 const std::string& dir) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    FakeClock clock;
    Result<std::unique_ptr<store::Store>> opened =
        store::OpenSqliteStore(dir, {&clock, 100000}, store::SqliteDurability::kProcessCrash);
    STRATA_CHECK(opened.has_value());
    scenario.setup(**opened, clock);
  }
  int pipe_fds[2];
  STRATA_CHECK(pipe(pipe_fds) == 0);
  pid_t child = fork();
  STRATA_CHECK(child >= 0);
  if (child == 0) {
    close(pipe_fds[0]);
    FakeClock clock;
    Result<std::unique_ptr<store::Store>> opened =
        store::OpenSqliteStore(dir, {&clock, 100000}, store::SqliteDurability::kProcessCrash);
    if (!opened) _exit(3);
    store::FaultInjectingStore faulty(**opened);
    faulty.FailAt(die_at, store::FaultInjectingStore::Fault::kExit, [] { _exit(137); });
    Process process = scenario.start(faulty, clock);
    RunPasses(scenario, **opened, faulty, clock, process, 0, [&](int pass) {
      // Which pass the process is in, for the one that takes over.
      if (write(pipe_fds[1], &pass, sizeof(pass)) != sizeof(pass)) _exit(4);
    });
    _exit(0);
  }
  close(pipe_fds[1]);
  int status = 0;
  STRATA_CHECK(waitpid(child, &status, 0) == child);
  int last_pass = -1;
  for (int pass = 0; read(pipe_fds[0], &pass, sizeof(pass)) == sizeof(pass);) last_pass = pass;
  close(pipe_fds[0]);
  CrashRun run;
  run.died = WIFEXITED(status) && WEXITSTATUS(status) == 137;
  STRATA_CHECK(run.died || (WIFEXITED(status) && WEXITSTATUS(status) == 0));

  // The process that takes over: the same file, the clock where the dead one was.
  FakeClock clock;
  clock.Advance(scenario.step * std::max(0, last_pass));
  Result<std::unique_ptr<store::Store>> opened =
      store::OpenSqliteStore(dir, {&clock, 100000}, store::SqliteDurability::kProcessCrash);
  STRATA_CHECK(opened.has_value());
  if (run.died) {
    store::FaultInjectingStore faulty(**opened);
    Process process = scenario.start(faulty, clock);
    RunPasses(scenario, **opened, faulty, clock, process, last_pass);
    process = Process{};
  }
  run.end_state = EndState(**opened);
  return run;
}

}  // namespace strata::controller::testing
