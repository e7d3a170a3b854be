// Throughput of the Store backends: writes (single and batched), reads, lists and watch
// fan-out. Each benchmark takes the backend as its argument: 0 memory, 1 SQLite with
// synchronous=NORMAL (survives kill -9), 2 SQLite with synchronous=FULL (survives power loss).
//
//   store_bench [--data_dir=DIR] [--benchmark_filter=...]
//
// SQLite files go to a fresh directory under DIR (default: the system temporary directory),
// removed afterwards; put DIR on the disk whose fsync cost you want to measure.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/check.h"
#include "store/sqlite_store.h"
#include "store/store.h"

namespace strata::store {
namespace {

std::string& DataDir() {
  static std::string dir = std::filesystem::temp_directory_path().string();
  return dir;
}

// A store of the benchmark's backend in a fresh directory, removed with it.
class BenchStore {
 public:
  explicit BenchStore(benchmark::State& state) {
    StoreOptions options;
    int backend = static_cast<int>(state.range(0));
    if (backend == 0) {
      state.SetLabel("memory");
      store_ = NewMemoryStore(options);
      return;
    }
    std::string pattern = (std::filesystem::path(DataDir()) / "strata-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      state.SkipWithError("cannot create a directory under --data_dir");
      return;
    }
    dir_ = pattern;
    SqliteDurability durability =
        backend == 1 ? SqliteDurability::kProcessCrash : SqliteDurability::kPowerLoss;
    state.SetLabel(backend == 1 ? "sqlite-normal" : "sqlite-full");
    Result<std::unique_ptr<Store>> store = OpenSqliteStore(dir_, options, durability);
    if (!store) {
      state.SkipWithError(store.error().ToString().c_str());
      return;
    }
    store_ = std::move(*store);
  }
  ~BenchStore() {
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  Store* operator->() { return store_.get(); }
  bool ok() const { return store_ != nullptr; }

 private:
  std::string dir_;
  std::unique_ptr<Store> store_;
};

// A Job of about 600 bytes of JSON, like a small training job manifest.
Object MakeJob(int64_t i) {
  Object object;
  object.key = {"Job", "team-" + std::to_string(i % 8), "job-" + std::to_string(i)};
  object.labels = {{"team", "team-" + std::to_string(i % 8)},
                   {"tier", i % 10 == 0 ? "premium" : "standard"}};
  object.body = {{"apiVersion", "strata.dev/v1alpha1"},
                 {"kind", "Job"},
                 {"spec",
                  {{"replicas", 4},
                   {"procPerNode", 8},
                   {"queue", "research"},
                   {"maxRestarts", 3},
                   {"resources", {{"nvidia.com/gpu", 8}, {"cpu", "64"}, {"memory", "512Gi"}}},
                   {"template",
                    {{"image", "registry.local/train:1.4.2"},
                     {"command", {"torchrun", "train.py", "--config", "configs/llama-8b.yaml"}},
                     {"env", {{"NCCL_DEBUG", "WARN"}, {"HF_HOME", "/cache/hf"}}}}}}}};
  return object;
}

void BM_Create(benchmark::State& state) {
  BenchStore store(state);
  if (!store.ok()) return;
  int64_t i = 0;
  for (auto _ : state) {
    if (!store->Create(MakeJob(i++))) state.SkipWithError("create failed");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Create)->Arg(0)->Arg(1)->Arg(2)->UseRealTime();

// Eight threads creating at once: concurrent Applies share a commit (group commit), so the
// durable backends' throughput grows with the number of writers.
void BM_CreateFrom8Threads(benchmark::State& state) {
  static BenchStore* store = nullptr;
  if (state.thread_index() == 0) store = new BenchStore(state);
  int64_t i = state.thread_index() * 1'000'000'000LL;
  for (auto _ : state) {
    if (!(*store)->Create(MakeJob(i++))) state.SkipWithError("create failed");
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    delete store;
    store = nullptr;
  }
}
BENCHMARK(BM_CreateFrom8Threads)->Arg(0)->Arg(1)->Arg(2)->Threads(8)->UseRealTime();

void BM_UpdateConditional(benchmark::State& state) {
  BenchStore store(state);
  if (!store.ok()) return;
  constexpr int64_t kObjects = 1000;
  std::vector<Object> current;
  for (int64_t i = 0; i < kObjects; ++i) current.push_back(*store->Create(MakeJob(i)));
  int64_t i = 0;
  for (auto _ : state) {
    Object& object = current[i++ % kObjects];
    object.body["spec"]["replicas"] = i;
    Result<Object> updated = store->Update(object);
    if (!updated) state.SkipWithError("update failed");
    object.resource_version = updated->resource_version;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_UpdateConditional)->Arg(0)->Arg(1)->Arg(2)->UseRealTime();

// One Apply of 100 creates per iteration: what a multi-object manifest costs, and how a batch
// amortises SQLite's commit.
void BM_ApplyBatchOf100(benchmark::State& state) {
  BenchStore store(state);
  if (!store.ok()) return;
  int64_t i = 0;
  for (auto _ : state) {
    std::vector<Write> batch;
    for (int k = 0; k < 100; ++k) batch.push_back({WriteOp::kCreate, MakeJob(i++)});
    if (!store->Apply(std::move(batch))) state.SkipWithError("apply failed");
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(BM_ApplyBatchOf100)->Arg(0)->Arg(1)->Arg(2)->UseRealTime();

void BM_Get(benchmark::State& state) {
  BenchStore store(state);
  if (!store.ok()) return;
  std::vector<Write> batch;
  std::vector<ObjectKey> keys;
  for (int64_t i = 0; i < 10000; ++i) {
    batch.push_back({WriteOp::kCreate, MakeJob(i)});
    keys.push_back(batch.back().object.key);
  }
  STRATA_CHECK(store->Apply(std::move(batch)).has_value());
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(store->Get(keys[i++ % keys.size()]));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Get)->Arg(0)->Arg(1);

// List one namespace's premium jobs out of 10,000 jobs (125 items per list).
void BM_ListWithSelector(benchmark::State& state) {
  BenchStore store(state);
  if (!store.ok()) return;
  std::vector<Write> batch;
  for (int64_t i = 0; i < 10000; ++i) batch.push_back({WriteOp::kCreate, MakeJob(i)});
  STRATA_CHECK(store->Apply(std::move(batch)).has_value());
  Selection selection{"Job", "team-0", *LabelSelector::Parse("tier=premium")};
  size_t items = 0;
  for (auto _ : state) {
    Result<ListResult> listed = store->List(selection);
    items += listed->items.size();
  }
  state.SetItemsProcessed(static_cast<int64_t>(items));
}
BENCHMARK(BM_ListWithSelector)->Arg(0)->Arg(1);

// Each write fans out to 10 watchers, which drain their events: items are events delivered.
void BM_WatchFanOutTo10(benchmark::State& state) {
  BenchStore store(state);
  if (!store.ok()) return;
  std::vector<std::unique_ptr<Watcher>> watchers;
  for (int w = 0; w < 10; ++w) watchers.push_back(std::move(*store->Watch(WatchOptions{})));
  int64_t i = 0;
  int64_t delivered = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(store->Create(MakeJob(i++)));
    for (auto& watcher : watchers) {
      while (true) {
        Result<std::optional<WatchEvent>> event = watcher->TryNext();
        if (!event || !*event) break;
        ++delivered;
      }
    }
  }
  state.SetItemsProcessed(delivered);
}
BENCHMARK(BM_WatchFanOutTo10)->Arg(0)->Arg(1)->UseRealTime();

}  // namespace
}  // namespace strata::store

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    constexpr char kFlag[] = "--data_dir=";
    if (std::strncmp(argv[i], kFlag, sizeof(kFlag) - 1) == 0) {
      strata::store::DataDir() = argv[i] + sizeof(kFlag) - 1;
    } else {
      args.push_back(argv[i]);
    }
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
