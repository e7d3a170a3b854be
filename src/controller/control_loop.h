#pragma once

#include "common/status.h"

namespace strata::controller {

// One reconcile pass of a control loop (the scheduler adapter, the job controller, the node
// controller): read the store, decide, write. The owner (`strata up`, a simulation, a test)
// calls RunOnce repeatedly from one thread; implementations are not thread-safe and keep only
// small caches between passes, so a pass after a restart converges to the same state.
class ControlLoop {
 public:
  virtual ~ControlLoop() = default;

  // Runs one pass. Each object's writes go in one store batch, all or nothing; a failed batch
  // (a conflicting write by someone else, a store error) leaves that object unchanged, the pass
  // goes on with the others and returns the first error. The next pass retries.
  virtual Status RunOnce() = 0;
};

}  // namespace strata::controller
