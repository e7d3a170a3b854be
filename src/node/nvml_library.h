#pragma once

// The one table of NVML functions strata calls, with our own declarations of the NVML types and
// constants they take (nvml.h, API v2+, whose values are part of NVML's stable ABI; no NVIDIA
// header is in the repository). Both NVML readers of the node module use it: the inventory
// (nvml_inventory.cc) and the GPU monitor (gpu_metrics.cc). Internal to src/node.

#include <memory>
#include <string>

#include "common/status.h"

namespace strata::node {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlEventSet_t = struct nvmlEventSet_st*;
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
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
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
inline constexpr unsigned NVML_DEVICE_MIG_ENABLE = 1;
inline constexpr int NVML_P2P_CAPS_INDEX_NVLINK = 2;
inline constexpr int NVML_P2P_STATUS_OK = 0;
inline constexpr int NVML_TEMPERATURE_GPU = 0;
inline constexpr int NVML_CLOCK_SM = 1;
inline constexpr int NVML_MEMORY_ERROR_TYPE_CORRECTED = 0;
inline constexpr int NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1;
inline constexpr int NVML_VOLATILE_ECC = 0;
inline constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8;
inline constexpr unsigned kUuidBufferSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned kNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE

// A dlopen-ed, initialised NVML: every function strata calls, resolved at Open. Destroying it
// shuts NVML down and unloads the library. Thread-compatible, like NVML's own handles.
class NvmlLibrary {
 public:
  // Loads `path` (a name for the loader's search, or a path; tests use the fake NVML library),
  // resolves every function and calls nvmlInit. Unavailable when the library cannot be loaded,
  // lacks a symbol (named), or nvmlInit fails; the message carries the loader's or NVML's words.
  static Result<std::unique_ptr<NvmlLibrary>> Open(const std::string& path);

  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*get_count)(unsigned*) = nullptr;
  nvmlReturn_t (*get_handle_by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*get_name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*get_uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*get_memory_info)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*get_mig_mode)(nvmlDevice_t, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*get_max_mig_device_count)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*get_mig_device_handle_by_index)(nvmlDevice_t, unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*get_p2p_status)(nvmlDevice_t, nvmlDevice_t, int, int*) = nullptr;
  nvmlReturn_t (*get_utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*get_power_usage)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*get_temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*get_clock_info)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*get_total_ecc_errors)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*event_set_create)(nvmlEventSet_t*) = nullptr;
  nvmlReturn_t (*register_events)(nvmlDevice_t, unsigned long long, nvmlEventSet_t) = nullptr;
  nvmlReturn_t (*event_set_wait)(nvmlEventSet_t, nvmlEventData_t*, unsigned) = nullptr;
  nvmlReturn_t (*event_set_free)(nvmlEventSet_t) = nullptr;

 private:
  explicit NvmlLibrary(void* handle) : handle_(handle) {}

  void* handle_;
  bool initialised_ = false;
};

}  // namespace strata::node
