#pragma once

// Our own declarations of the NVML types, constants and symbol lookup that both NVML readers of
// the node module use (nvml_inventory.cc, gpu_metrics.cc): nvml.h, API v2+, whose values are part
// of NVML's stable ABI. No NVIDIA header is in the repository. Internal to src/node.

#include <dlfcn.h>
#include <fmt/format.h>

#include "common/status.h"

namespace strata::node {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr unsigned kUuidBufferSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE

// Points `fn` at `symbol` of the dlopen-ed `library`; Unavailable naming the symbol when the
// library lacks it.
template <typename Fn>
Status ResolveNvmlSymbol(void* library, const char* symbol, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (*fn == nullptr) {
    return UnavailableError(fmt::format("NVML library lacks the symbol {}", symbol));
  }
  return Status::Ok();
}

}  // namespace strata::node
