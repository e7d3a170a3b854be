// A stand-in for libnvidia-ml.so.1, built only for tests: it exports the nvml* C symbols that
// NvmlInventory loads and answers with a fixed machine. 8 GPUs "NVIDIA H100 80GB HBM3" in two
// NVLink islands {0-3} and {4-7}; GPUs 0-3 do not support MIG, GPUs 4, 6 and 7 have it
// disabled, and GPU 5 is in MIG mode with two 1g.10gb instances in slots 0 and 2 (slot 1 empty,
// 7 slots). Read-only static data: thread-safe.
//
// Live figures, for NvmlGpuMonitor's tests: GPU i reads utilisation 10*i %, i GiB of memory
// used, (100 + i) W, (40 + i) C, SM clock (1980 - i) MHz; GPU 2 counts 3 corrected and 1
// uncorrected volatile ECC errors, GPU 7 does not support ECC counters; GPU 6 reports Xid 79 as
// the first event of an event set (the only mutable state: one flag per set, one set per test).

#include <cstdio>
#include <cstring>

struct nvmlDevice_st {
  bool is_mig;
  unsigned index;  // GPU index, or MIG instance number
};

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr int kInsufficientSize = 7;
constexpr int kNotFound = 6;
constexpr unsigned kGpuCount = 8;
constexpr unsigned kMigGpu = 5;
constexpr unsigned kMigSlots = 7;
constexpr unsigned long long kGpuMemory = 81559ULL << 20;
constexpr unsigned long long kMigMemory = 9856ULL << 20;

nvmlDevice_st gpus[kGpuCount] = {{false, 0}, {false, 1}, {false, 2}, {false, 3},
                                 {false, 4}, {false, 5}, {false, 6}, {false, 7}};
nvmlDevice_st migs[2] = {{true, 0}, {true, 1}};

constexpr int kTimeout = 10;
constexpr unsigned long long kXidEventType = 0x8;
constexpr unsigned kXidGpu = 6;
constexpr unsigned long long kXid = 79;

int CopyOut(const char* text, char* buffer, unsigned length) {
  if (buffer == nullptr) return kInvalidArgument;
  if (std::strlen(text) + 1 > length) return kInsufficientSize;
  std::strcpy(buffer, text);
  return kSuccess;
}

}  // namespace

extern "C" {

struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

__attribute__((visibility("default"))) int nvmlInit_v2() { return kSuccess; }
__attribute__((visibility("default"))) int nvmlShutdown() { return kSuccess; }

__attribute__((visibility("default"))) const char* nvmlErrorString(int rc) {
  return rc == kSuccess ? "Success" : "Fake NVML error";
}

__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = kGpuCount;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned index,
                                                                         nvmlDevice_st** device) {
  if (index >= kGpuCount) return kInvalidArgument;
  *device = &gpus[index];
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetName(nvmlDevice_st* device, char* name,
                                                             unsigned length) {
  return CopyOut(device->is_mig ? "NVIDIA H100 80GB HBM3 MIG 1g.10gb" : "NVIDIA H100 80GB HBM3",
                 name, length);
}

__attribute__((visibility("default"))) int nvmlDeviceGetUUID(nvmlDevice_st* device, char* uuid,
                                                             unsigned length) {
  char text[96];
  if (device->is_mig) {
    std::snprintf(text, sizeof text, "MIG-fake-%u-%u", kMigGpu, device->index);
  } else {
    std::snprintf(text, sizeof text, "GPU-fake-%u", device->index);
  }
  return CopyOut(text, uuid, length);
}

__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(nvmlDevice_st* device,
                                                                   nvmlMemory_t* memory) {
  memory->total = device->is_mig ? kMigMemory : kGpuMemory;
  memory->used = device->is_mig ? 0 : static_cast<unsigned long long>(device->index) << 30;
  memory->free = memory->total - memory->used;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetMigMode(nvmlDevice_st* device,
                                                                unsigned* current,
                                                                unsigned* pending) {
  if (device->is_mig || device->index < 4) return kNotSupported;
  *current = *pending = device->index == kMigGpu ? 1 : 0;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_st* device,
                                                                          unsigned* count) {
  if (device->is_mig || device->index < 4) return kNotSupported;
  *count = kMigSlots;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetMigDeviceHandleByIndex(
    nvmlDevice_st* device, unsigned slot, nvmlDevice_st** mig) {
  if (device->is_mig || device->index != kMigGpu || slot >= kMigSlots) return kInvalidArgument;
  if (slot == 0) {
    *mig = &migs[0];
    return kSuccess;
  }
  if (slot == 2) {
    *mig = &migs[1];
    return kSuccess;
  }
  return kNotFound;
}

__attribute__((visibility("default"))) int nvmlDeviceGetP2PStatus(nvmlDevice_st* a,
                                                                  nvmlDevice_st* b, int caps,
                                                                  int* status) {
  constexpr int kNvlinkCaps = 2;
  constexpr int kStatusOk = 0;
  constexpr int kStatusNotSupported = 4;
  if (caps != kNvlinkCaps) return kInvalidArgument;
  *status = (a->index / 4 == b->index / 4) ? kStatusOk : kStatusNotSupported;
  return kSuccess;
}

struct nvmlUtilization_t {
  unsigned gpu;
  unsigned memory;
};

struct nvmlEventSet_st {
  bool xid_delivered;
};

struct nvmlEventData_t {
  nvmlDevice_st* device;
  unsigned long long event_type;
  unsigned long long event_data;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(
    nvmlDevice_st* device, nvmlUtilization_t* utilization) {
  if (device->is_mig) return kNotSupported;
  utilization->gpu = 10 * device->index;
  utilization->memory = 5 * device->index;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetPowerUsage(nvmlDevice_st* device,
                                                                   unsigned* milliwatts) {
  if (device->is_mig) return kNotSupported;
  *milliwatts = (100 + device->index) * 1000;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetTemperature(nvmlDevice_st* device,
                                                                    int sensor, unsigned* celsius) {
  constexpr int kGpuSensor = 0;
  if (sensor != kGpuSensor) return kInvalidArgument;
  *celsius = 40 + device->index;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetClockInfo(nvmlDevice_st* device, int type,
                                                                  unsigned* mhz) {
  constexpr int kSmClock = 1;
  if (type != kSmClock) return kInvalidArgument;
  *mhz = 1980 - device->index;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetTotalEccErrors(nvmlDevice_st* device,
                                                                       int error_type,
                                                                       int counter_type,
                                                                       unsigned long long* count) {
  constexpr int kVolatile = 0;
  if (counter_type != kVolatile) return kInvalidArgument;
  if (device->index == 7) return kNotSupported;
  *count = device->index != 2 ? 0 : error_type == 0 ? 3 : 1;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlEventSetCreate(nvmlEventSet_st** set) {
  *set = new nvmlEventSet_st{false};
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlEventSetFree(nvmlEventSet_st* set) {
  delete set;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceRegisterEvents(nvmlDevice_st* device,
                                                                    unsigned long long types,
                                                                    nvmlEventSet_st* set) {
  if (device->is_mig || set == nullptr) return kInvalidArgument;
  return types == kXidEventType ? kSuccess : kNotSupported;
}

__attribute__((visibility("default"))) int nvmlEventSetWait_v2(nvmlEventSet_st* set,
                                                               nvmlEventData_t* data,
                                                               unsigned timeout_ms) {
  if (set->xid_delivered) return kTimeout;
  set->xid_delivered = true;
  *data = nvmlEventData_t{&gpus[kXidGpu], kXidEventType, kXid, 0, 0};
  return kSuccess;
}

}  // extern "C"
