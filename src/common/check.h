#pragma once

// STRATA_CHECK(cond) crashes loudly with the condition and its place when a program invariant is
// broken. Bad input never reaches a CHECK: it gets a Status (STYLE.md, "Errors").

namespace strata::internal {
[[noreturn]] void CheckFailed(const char* condition, const char* file, int line);
}  // namespace strata::internal

#define STRATA_CHECK(cond) \
  ((cond) ? (void)0 : ::strata::internal::CheckFailed(#cond, __FILE__, __LINE__))
