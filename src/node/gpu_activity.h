#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "common/clock.h"

// How busy a pod keeps the simulated GPUs it holds, judged by what its real processes do. A GPU
// program's host side drives each GPU from a process that keeps a core busy while the GPU works
// (torchrun starts one worker per GPU; CUDA's default synchronisation spins) and sleeps when
// the GPU has nothing to do. So the busy share of a pod's GPUs is the CPU cores its processes
// used over a window per GPU it holds, capped at 1: one core spinning per GPU is fully busy, a
// pod that sleeps keeps them idle. Nothing else tells a simulated GPU's use, and the mapping
// lets idle reclaim and the utilisation series judge simulated jobs as they would real ones.

namespace strata::node {

// The busy share of `gpus` GPUs (fractional shares summed) driven by `cpu_used` of CPU time
// over `elapsed`: min(1, cores used / gpus), 0 when nothing elapsed, no GPU is held, or the CPU
// time went down (processes ended).
double GpuBusyShare(Duration cpu_used, Duration elapsed, double gpus);

// Whether a measured share is worth a write over the one recorded on the pod: there is none,
// or the two differ by kGpuActivityStep or more. The step keeps writes rare (a pod's use jitters
// from window to window) at the cost of up to a tenth of error, small beside an idle threshold
// (30 % by default).
inline constexpr double kGpuActivityStep = 0.1;
bool GpuActivityWorthRecording(std::optional<double> recorded, double measured);

// Follows pods' CPU time, one window after another, and turns each window into the busy share
// of the pod's GPUs (GpuBusyShare). Owned by the node agent; not thread-safe.
class GpuActivityMeter {
 public:
  // REQUIRES: window > 0.
  explicit GpuActivityMeter(Duration window);

  // Whether pod `uid` is due a reading at `now`: it has none yet, or its window is over.
  bool Due(const std::string& uid, TimePoint now) const;

  // Records pod `uid`'s CPU time `cpu_time` at `now`, which begins its next window. Returns the
  // busy share of its `gpus` GPUs over the window this reading ends; nullopt for a pod's first
  // reading, which only begins one.
  std::optional<double> Record(const std::string& uid, Duration cpu_time, double gpus,
                               TimePoint now);

  // Forgets every pod not in `uids` (pods that ended, whose uids never come back).
  void Retain(const std::set<std::string>& uids);

 private:
  struct Reading {
    Duration cpu_time{};
    TimePoint at{};
  };

  Duration window_;
  std::map<std::string, Reading> window_start_;
};

}  // namespace strata::node
