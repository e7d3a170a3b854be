#include "node/nvml_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

namespace strata::node {
namespace {

// Points `fn` at `symbol` of the dlopen-ed `library`; Unavailable naming the symbol when the
// library lacks it.
template <typename Fn>
Status Resolve(void* library, const char* symbol, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (*fn == nullptr) {
    return UnavailableError(fmt::format("NVML library lacks the symbol {}", symbol));
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Open(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return Err(UnavailableError(fmt::format("NVML not loaded: {}", dlerror())));
  }
  std::unique_ptr<NvmlLibrary> nvml(new NvmlLibrary(handle));
  NvmlLibrary& f = *nvml;
  for (Status status : {
           Resolve(handle, "nvmlInit_v2", &f.init),
           Resolve(handle, "nvmlShutdown", &f.shutdown),
           Resolve(handle, "nvmlErrorString", &f.error_string),
           Resolve(handle, "nvmlDeviceGetCount_v2", &f.get_count),
           Resolve(handle, "nvmlDeviceGetHandleByIndex_v2", &f.get_handle_by_index),
           Resolve(handle, "nvmlDeviceGetName", &f.get_name),
           Resolve(handle, "nvmlDeviceGetUUID", &f.get_uuid),
           Resolve(handle, "nvmlDeviceGetMemoryInfo", &f.get_memory_info),
           Resolve(handle, "nvmlDeviceGetMigMode", &f.get_mig_mode),
           Resolve(handle, "nvmlDeviceGetMaxMigDeviceCount", &f.get_max_mig_device_count),
           Resolve(handle, "nvmlDeviceGetMigDeviceHandleByIndex",
                   &f.get_mig_device_handle_by_index),
           Resolve(handle, "nvmlDeviceGetP2PStatus", &f.get_p2p_status),
           Resolve(handle, "nvmlDeviceGetUtilizationRates", &f.get_utilization),
           Resolve(handle, "nvmlDeviceGetPowerUsage", &f.get_power_usage),
           Resolve(handle, "nvmlDeviceGetTemperature", &f.get_temperature),
           Resolve(handle, "nvmlDeviceGetClockInfo", &f.get_clock_info),
           Resolve(handle, "nvmlDeviceGetTotalEccErrors", &f.get_total_ecc_errors),
           Resolve(handle, "nvmlEventSetCreate", &f.event_set_create),
           Resolve(handle, "nvmlDeviceRegisterEvents", &f.register_events),
           Resolve(handle, "nvmlEventSetWait_v2", &f.event_set_wait),
           Resolve(handle, "nvmlEventSetFree", &f.event_set_free),
       }) {
    if (!status.ok()) return Err(status);
  }
  nvmlReturn_t rc = f.init();
  if (rc != NVML_SUCCESS) {
    return Err(UnavailableError(fmt::format("nvmlInit failed: {}", f.error_string(rc))));
  }
  f.initialised_ = true;
  return nvml;
}

NvmlLibrary::~NvmlLibrary() {
  if (initialised_) shutdown();
  dlclose(handle_);
}

}  // namespace strata::node
