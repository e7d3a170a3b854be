#include "kubesched/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace strata::kubesched {

void RunParallel(size_t count, int workers, const std::function<void(size_t)>& task) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < count; i = next++) task(i);
  };
  size_t helpers = std::min<size_t>(count, static_cast<size_t>(std::max(workers, 1))) - (count > 0);
  std::vector<std::thread> threads;
  threads.reserve(helpers);
  for (size_t i = 0; i < helpers; ++i) threads.emplace_back(work);
  work();
  for (std::thread& thread : threads) thread.join();
}

}  // namespace strata::kubesched
