#include "node/gpu_metrics.h"

#include <fmt/format.h>

#include <map>

#include "node/nvml_library.h"

namespace strata::node {
// The Xid event set, registered for every GPU that can deliver Xid events.
struct NvmlGpuMonitor::XidEvents {
  nvmlEventSet_t set = nullptr;
  std::map<nvmlDevice_t, double> last_xid;  // devices registered for Xid events
};

Result<std::unique_ptr<NvmlGpuMonitor>> NvmlGpuMonitor::Open(const std::string& library_path) {
  ASSIGN_OR_RETURN(std::unique_ptr<NvmlLibrary> nvml, NvmlLibrary::Open(library_path));
  auto xid = std::make_unique<XidEvents>();
  // Xid errors arrive only as events; a GPU that cannot deliver them keeps an unknown last Xid.
  if (nvml->event_set_create(&xid->set) == NVML_SUCCESS) {
    unsigned count = 0;
    if (nvml->get_count(&count) == NVML_SUCCESS) {
      for (unsigned i = 0; i < count; ++i) {
        nvmlDevice_t device = nullptr;
        if (nvml->get_handle_by_index(i, &device) == NVML_SUCCESS &&
            nvml->register_events(device, nvmlEventTypeXidCriticalError, xid->set) ==
                NVML_SUCCESS) {
          xid->last_xid[device] = 0;
        }
      }
    }
  } else {
    xid->set = nullptr;
  }
  return std::unique_ptr<NvmlGpuMonitor>(new NvmlGpuMonitor(std::move(nvml), std::move(xid)));
}

NvmlGpuMonitor::NvmlGpuMonitor(std::unique_ptr<NvmlLibrary> nvml, std::unique_ptr<XidEvents> xid)
    : nvml_(std::move(nvml)), xid_(std::move(xid)) {}

NvmlGpuMonitor::~NvmlGpuMonitor() {
  if (xid_->set != nullptr) nvml_->event_set_free(xid_->set);
}

void NvmlGpuMonitor::DrainXidEvents() {
  if (xid_->set == nullptr) return;
  nvmlEventData_t event{};
  // A zero timeout returns at once: only what already arrived is read.
  while (nvml_->event_set_wait(xid_->set, &event, 0) == NVML_SUCCESS) {
    auto device = xid_->last_xid.find(event.device);
    if (device != xid_->last_xid.end() && event.event_type == nvmlEventTypeXidCriticalError) {
      device->second = static_cast<double>(event.event_data);
    }
  }
}

Result<observe::GpuReadingsByUuid> NvmlGpuMonitor::Read() {
  DrainXidEvents();
  const NvmlLibrary& api = *nvml_;
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
    auto xid = xid_->last_xid.find(device);
    if (xid != xid_->last_xid.end()) reading.last_xid = xid->second;
    readings.emplace(uuid, reading);
  }
  return readings;
}

}  // namespace strata::node
