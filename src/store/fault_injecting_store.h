#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "store/store.h"

namespace strata::store {

// A Store over another that makes one chosen write fail, to prove that a reconciler is correct
// when its process dies between any two of its writes. Writes are counted one object at a time
// (a batch of n writes counts n). The Nth write (1-based) from FailAt on:
//  - kFail: fails with Unavailable, and the writes after it go through (a transient error);
//  - kDie: fails with Unavailable, and so does every write after it until Revive: the process
//    is dead, and what it would write next is lost; the test then starts the loops again, fresh,
//    on the same store, as a restarted process would;
//  - kExit: calls `on_exit` (a forked test child's _exit) instead of writing: the process dies
//    for real;
//  - kConflict: fails with Conflict, as when another writer changed the object since it was
//    read, and the writes after it go through.
// A batch containing the Nth write fails whole (a batch is atomic in the embedded backends).
// Reads, lists and watches always go to the store underneath.
//
// For tests; thread-safe.
class FaultInjectingStore final : public Store {
 public:
  enum class Fault { kFail, kDie, kExit, kConflict };

  explicit FaultInjectingStore(Store& base) : base_(base) {}

  // Arms a fault at the `n`th write from now (n >= 1). `on_exit` is what kExit calls.
  void FailAt(int64_t n, Fault fault, std::function<void()> on_exit = {});
  // After kDie: writes go through again.
  void Revive();
  // Writes attempted through this store so far (failed ones included).
  int64_t writes() const { return writes_.load(); }
  // Whether a kDie fault fired and no Revive followed.
  bool dead() const { return dead_.load(); }

  Result<std::vector<Object>> Apply(std::vector<Write> writes) override;
  Result<Object> Get(const ObjectKey& key) const override { return base_.Get(key); }
  Result<ListResult> List(const Selection& selection) const override {
    return base_.List(selection);
  }
  Result<std::unique_ptr<Watcher>> Watch(const WatchOptions& options) override {
    return base_.Watch(options);
  }
  int64_t CurrentVersion() const override { return base_.CurrentVersion(); }

 private:
  Store& base_;
  std::mutex mutex_;     // guards the fault below
  int64_t fail_at_ = 0;  // absolute write number; 0: none armed
  Fault fault_ = Fault::kFail;
  std::function<void()> on_exit_;
  std::atomic<int64_t> writes_ = 0;
  std::atomic<bool> dead_ = false;
};

}  // namespace strata::store
