#include "common/check.h"

#include <cstdio>
#include <cstdlib>

namespace strata::internal {

void CheckFailed(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "CHECK failed at %s:%d: %s\n", file, line, condition);
  std::fflush(stderr);
  std::abort();
}

}  // namespace strata::internal
