#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "observe/cluster_gpus.h"

namespace strata::node {

class NvmlLibrary;

// Reads the figures the DCGM exporter exports (utilisation, framebuffer used and free, power,
// temperature, SM clock, volatile ECC error counts, the last Xid) from every GPU of this host
// through NVML, loaded with dlopen like NvmlInventory so that strata needs no NVIDIA header or
// driver to build. The library stays loaded, and an NVML event set stays registered for Xid
// errors, for the monitor's lifetime; each Read drains the Xid events that arrived since the
// last one without waiting.
//
// Owned by whoever exports the node's GPU metrics (the control plane's metrics collector or a
// node agent). Thread-compatible: call Read from one thread at a time.
class NvmlGpuMonitor {
 public:
  // Loads `library_path` (a name for the loader's search, or a path; tests use the fake NVML
  // library) and initialises NVML. Unavailable when the library cannot be loaded, lacks a
  // symbol, or nvmlInit fails; the message carries the loader's or NVML's words.
  static Result<std::unique_ptr<NvmlGpuMonitor>> Open(const std::string& library_path);

  ~NvmlGpuMonitor();  // nvmlShutdown, then unloads the library
  NvmlGpuMonitor(const NvmlGpuMonitor&) = delete;
  NvmlGpuMonitor& operator=(const NvmlGpuMonitor&) = delete;

  // One reading per GPU, by UUID. A figure the GPU does not support (NVML_ERROR_NOT_SUPPORTED)
  // stays unknown and its series is left out; last_xid is 0 until an Xid event arrives, and
  // unknown when the driver cannot deliver Xid events. Internal, naming the GPU and the call,
  // when another query fails; nothing is partially returned.
  Result<observe::GpuReadingsByUuid> Read();

  // The opened library it reads through, for other queries in the same session.
  const NvmlLibrary& library() const { return *nvml_; }

 private:
  struct XidEvents;
  NvmlGpuMonitor(std::unique_ptr<NvmlLibrary> nvml, std::unique_ptr<XidEvents> xid);
  void DrainXidEvents();

  std::unique_ptr<NvmlLibrary> nvml_;  // destroyed after xid_'s event set is freed
  std::unique_ptr<XidEvents> xid_;
};

}  // namespace strata::node
