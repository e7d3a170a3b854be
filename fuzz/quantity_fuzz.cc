// Quantity::Parse on arbitrary bytes: never crashes, and what it accepts prints canonically and
// parses back to the same value.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  strata::Result<strata::Quantity> q = strata::Quantity::Parse(text);
  if (!q) {
    if (q.error().message().empty()) std::abort();
    return 0;
  }
  strata::Result<strata::Quantity> back = strata::Quantity::Parse(q->ToString());
  if (!back || *back != *q) std::abort();
  return 0;
}
