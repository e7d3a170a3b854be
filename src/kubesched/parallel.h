#pragma once

#include <cstddef>
#include <functional>

namespace strata::kubesched {

// Runs task(0) .. task(count - 1) on up to `workers` threads (the caller's among them) and
// returns when all have run. For API requests that wait on the network, as kube-scheduler binds
// in goroutines; `task` must be safe to run concurrently with itself.
void RunParallel(size_t count, int workers, const std::function<void(size_t)>& task);

}  // namespace strata::kubesched
