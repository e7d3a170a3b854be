#include "node/gpu_metrics.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <map>

#include "node/nvml_abi.h"

namespace strata::node {
namespace {

// Our own declarations of the further NVML types and functions read here (nvml.h, API v2+);
// values are part of NVML's stable ABI.
using nvmlEventSet_t = struct nvmlEventSet_st*;
struct nvmlUtilization_t {
  unsigned gpu;
  unsigned memory;
};
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long event_type;
  unsigned long long event_data;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};
constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
constexpr int NVML_TEMPERATURE_GPU = 0;
constexpr int NVML_CLOCK_SM = 1;
constexpr int NVML_MEMORY_ERROR_TYPE_CORRECTED = 0;
constexpr int NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1;
constexpr int NVML_VOLATILE_ECC = 0;
constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8;

}  // namespace

struct NvmlGpuMonitor::Api {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  const char* (*error_string)(nvmlReturn_t);
  nvmlReturn_t (*get_count)(unsigned*);
  nvmlReturn_t (*get_handle_by_index)(unsigned, nvmlDevice_t*);
  nvmlReturn_t (*get_uuid)(nvmlDevice_t, char*, unsigned);
  nvmlReturn_t (*get_memory_info)(nvmlDevice_t, nvmlMemory_t*);
  nvmlReturn_t (*get_utilization)(nvmlDevice_t, nvmlUtilization_t*);
  nvmlReturn_t (*get_power_usage)(nvmlDevice_t, unsigned*);
  nvmlReturn_t (*get_temperature)(nvmlDevice_t, int, unsigned*);
  nvmlReturn_t (*get_clock_info)(nvmlDevice_t, int, unsigned*);
  nvmlReturn_t (*get_total_ecc_errors)(nvmlDevice_t, int, int, unsigned long long*);
  nvmlReturn_t (*event_set_create)(nvmlEventSet_t*);
  nvmlReturn_t (*register_events)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
  nvmlReturn_t (*event_set_wait)(nvmlEventSet_t, nvmlEventData_t*, unsigned);
  nvmlReturn_t (*event_set_free)(nvmlEventSet_t);

  nvmlEventSet_t xid_events = nullptr;
  std::map<nvmlDevice_t, double> last_xid;  // devices registered for Xid events
};

Result<std::unique_ptr<NvmlGpuMonitor>> NvmlGpuMonitor::Open(const std::string& library_path) {
  void* library = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return Err(UnavailableError(fmt::format("NVML not loaded: {}", dlerror())));
  }
  auto api = std::make_unique<Api>();
  for (Status status : {
           ResolveNvmlSymbol(library, "nvmlInit_v2", &api->init),
           ResolveNvmlSymbol(library, "nvmlShutdown", &api->shutdown),
           ResolveNvmlSymbol(library, "nvmlErrorString", &api->error_string),
           ResolveNvmlSymbol(library, "nvmlDeviceGetCount_v2", &api->get_count),
           ResolveNvmlSymbol(library, "nvmlDeviceGetHandleByIndex_v2", &api->get_handle_by_index),
           ResolveNvmlSymbol(library, "nvmlDeviceGetUUID", &api->get_uuid),
           ResolveNvmlSymbol(library, "nvmlDeviceGetMemoryInfo", &api->get_memory_info),
           ResolveNvmlSymbol(library, "nvmlDeviceGetUtilizationRates", &api->get_utilization),
           ResolveNvmlSymbol(library, "nvmlDeviceGetPowerUsage", &api->get_power_usage),
           ResolveNvmlSymbol(library, "nvmlDeviceGetTemperature", &api->get_temperature),
           ResolveNvmlSymbol(library, "nvmlDeviceGetClockInfo", &api->get_clock_info),
           ResolveNvmlSymbol(library, "nvmlDeviceGetTotalEccErrors", &api->get_total_ecc_errors),
           ResolveNvmlSymbol(library, "nvmlEventSetCreate", &api->event_set_create),
           ResolveNvmlSymbol(library, "nvmlDeviceRegisterEvents", &api->register_events),
           ResolveNvmlSymbol(library, "nvmlEventSetWait_v2", &api->event_set_wait),
           ResolveNvmlSymbol(library, "nvmlEventSetFree", &api->event_set_free),
       }) {
    if (!status.ok()) {
      dlclose(library);
      return Err(status);
    }
  }
  nvmlReturn_t rc = api->init();
  if (rc != NVML_SUCCESS) {
    std::string message = fmt::format("nvmlInit failed: {}", api->error_string(rc));
    dlclose(library);
    return Err(UnavailableError(message));
  }
  // Xid errors arrive only as events; a GPU that cannot deliver them keeps an unknown last Xid.
  if (api->event_set_create(&api->xid_events) == NVML_SUCCESS) {
    unsigned count = 0;
    if (api->get_count(&count) == NVML_SUCCESS) {
      for (unsigned i = 0; i < count; ++i) {
        nvmlDevice_t device = nullptr;
        if (api->get_handle_by_index(i, &device) == NVML_SUCCESS &&
            api->register_events(device, nvmlEventTypeXidCriticalError, api->xid_events) ==
                NVML_SUCCESS) {
          api->last_xid[device] = 0;
        }
      }
    }
  } else {
    api->xid_events = nullptr;
  }
  return std::unique_ptr<NvmlGpuMonitor>(new NvmlGpuMonitor(library, std::move(api)));
}

NvmlGpuMonitor::NvmlGpuMonitor(void* library, std::unique_ptr<Api> api)
    : library_(library), api_(std::move(api)) {}

NvmlGpuMonitor::~NvmlGpuMonitor() {
  if (api_->xid_events != nullptr) api_->event_set_free(api_->xid_events);
  api_->shutdown();
  dlclose(library_);
}

void NvmlGpuMonitor::DrainXidEvents() {
  if (api_->xid_events == nullptr) return;
  nvmlEventData_t event{};
  // A zero timeout returns at once: only what already arrived is read.
  while (api_->event_set_wait(api_->xid_events, &event, 0) == NVML_SUCCESS) {
    auto device = api_->last_xid.find(event.device);
    if (device != api_->last_xid.end() && event.event_type == nvmlEventTypeXidCriticalError) {
      device->second = static_cast<double>(event.event_data);
    }
  }
}

Result<observe::GpuReadingsByUuid> NvmlGpuMonitor::Read() {
  DrainXidEvents();
  const Api& api = *api_;
  unsigned count = 0;
  nvmlReturn_t rc = api.get_count(&count);
  if (rc != NVML_SUCCESS) {
    return Err(InternalError(fmt::format("nvmlDeviceGetCount failed: {}", api.error_string(rc))));
  }
  // A figure the device does not support stays unknown; any other failure is an error.
  auto optional = [&](nvmlReturn_t result, std::string_view call, unsigned index) -> Result<bool> {
    if (result == NVML_SUCCESS) return true;
    if (result == NVML_ERROR_NOT_SUPPORTED) return false;
    return Err(InternalError(
        fmt::format("NVML {} for GPU {} failed: {}", call, index, api.error_string(result))));
  };
  observe::GpuReadingsByUuid readings;
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    ASSIGN_OR_RETURN(bool found, optional(api.get_handle_by_index(i, &device), "GetHandle", i));
    char uuid[kUuidBufferSize] = {};
    ASSIGN_OR_RETURN(bool named, optional(api.get_uuid(device, uuid, sizeof uuid), "GetUUID", i));
    if (!found || !named) continue;
    observe::GpuReading reading;
    nvmlUtilization_t utilization{};
    ASSIGN_OR_RETURN(bool has_util,
                     optional(api.get_utilization(device, &utilization), "GetUtilizationRates", i));
    if (has_util) reading.utilization_percent = utilization.gpu;
    nvmlMemory_t memory{};
    ASSIGN_OR_RETURN(bool has_memory,
                     optional(api.get_memory_info(device, &memory), "GetMemoryInfo", i));
    if (has_memory) {
      reading.fb_used_mib = static_cast<double>(memory.used / (1ULL << 20));
      reading.fb_free_mib = static_cast<double>(memory.free / (1ULL << 20));
    }
    unsigned milliwatts = 0;
    ASSIGN_OR_RETURN(bool has_power,
                     optional(api.get_power_usage(device, &milliwatts), "GetPowerUsage", i));
    if (has_power) reading.power_watts = milliwatts / 1000.0;
    unsigned celsius = 0;
    ASSIGN_OR_RETURN(
        bool has_temperature,
        optional(api.get_temperature(device, NVML_TEMPERATURE_GPU, &celsius), "GetTemperature", i));
    if (has_temperature) reading.temperature_celsius = celsius;
    unsigned mhz = 0;
    ASSIGN_OR_RETURN(bool has_clock,
                     optional(api.get_clock_info(device, NVML_CLOCK_SM, &mhz), "GetClockInfo", i));
    if (has_clock) reading.sm_clock_mhz = mhz;
    unsigned long long corrected = 0;
    unsigned long long uncorrected = 0;
    ASSIGN_OR_RETURN(bool has_sbe,
                     optional(api.get_total_ecc_errors(device, NVML_MEMORY_ERROR_TYPE_CORRECTED,
                                                       NVML_VOLATILE_ECC, &corrected),
                              "GetTotalEccErrors", i));
    ASSIGN_OR_RETURN(bool has_dbe,
                     optional(api.get_total_ecc_errors(device, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                                       NVML_VOLATILE_ECC, &uncorrected),
                              "GetTotalEccErrors", i));
    if (has_sbe) reading.ecc_sbe_volatile = static_cast<double>(corrected);
    if (has_dbe) reading.ecc_dbe_volatile = static_cast<double>(uncorrected);
    auto xid = api_->last_xid.find(device);
    if (xid != api_->last_xid.end()) reading.last_xid = xid->second;
    readings.emplace(uuid, reading);
  }
  return readings;
}

}  // namespace strata::node
