#include "store/fault_injecting_store.h"

#include "common/check.h"

namespace strata::store {

void FaultInjectingStore::FailAt(int64_t n, Fault fault, std::function<void()> on_exit) {
  STRATA_CHECK(n >= 1);
  std::lock_guard lock(mutex_);
  fail_at_ = writes_.load() + n;
  fault_ = fault;
  on_exit_ = std::move(on_exit);
}

void FaultInjectingStore::Revive() {
  std::lock_guard lock(mutex_);
  dead_ = false;
  fail_at_ = 0;
}

Result<std::vector<Object>> FaultInjectingStore::Apply(std::vector<Write> writes) {
  {
    std::lock_guard lock(mutex_);
    const int64_t first = writes_.load() + 1;
    writes_ += static_cast<int64_t>(writes.size());
    if (dead_) return Err(UnavailableError("the process died (fault injected)"));
    const bool hit = fail_at_ != 0 && fail_at_ >= first &&
                     fail_at_ < first + static_cast<int64_t>(writes.size());
    if (hit) {
      fail_at_ = 0;
      if (fault_ == Fault::kExit && on_exit_) on_exit_();
      if (fault_ == Fault::kDie) dead_ = true;
      if (fault_ == Fault::kConflict) {
        return Err(ConflictError("write " + std::to_string(first) +
                                 ": another writer changed the object first (fault injected)"));
      }
      return Err(UnavailableError("write " + std::to_string(first) + " failed (fault injected)"));
    }
  }
  return base_.Apply(std::move(writes));
}

}  // namespace strata::store
